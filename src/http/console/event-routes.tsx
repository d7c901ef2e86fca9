import express, { type Request, type Response } from 'express';
import { EventNotFoundError, OperationRejectedError } from '../../core/errors';
import { errorLine } from '../../core/redact';
import { withinTime } from '../../core/within-time';
import { audit, auditOf } from '../../db/console-sessions';
import { loadBodyByWorkflowId } from '../../db/event-bodies';
import { listedEvent } from '../../db/event-list';
import { flowNamed } from '../../flows';
import { eventActionNamed, readActionInput, type ActionInput, type EventAction } from '../../operator/event-actions';
import type { EventView } from '../../temporal/event-view';
import { toProblem } from '../problem';
import { actionOf, jsonOf, signalData } from './actions';
import { decodeDelivery } from './delivery';
import { ConfirmPage } from './pages/confirm';
import { EventPage, type EventPageData } from './pages/event';
import { eventPath } from './pages/layout';
import { text } from './query';
import { page } from './render';
import type { ConsoleDeps } from './deps';
import { actorOf, requireAdmin, sessionOf } from './session';

/** One event's page, its reveal, and each action's confirmation and doing. Behind the console's sessions. */
export function eventRoutes(deps: ConsoleDeps): express.Router {
  const router = express.Router();
  router.get('/events/:eventId', showEvent(deps));
  router.post('/events/:eventId/reveal', requireAdmin, revealEvent(deps));
  router.get('/events/:eventId/confirm/:action', requireAdmin, confirmAction(deps));
  router.post('/events/:eventId/:action', requireAdmin, doAction(deps));
  return router;
}

type Handler = (req: Request<{ eventId: string; action?: string }>, res: Response) => Promise<void>;

/** The event's page, with the notice of an action just done. */
function showEvent(deps: ConsoleDeps): Handler {
  return async (req, res) => {
    const done = eventActionNamed(text(req, 'done') ?? '')?.done;
    const notice = done ? { kind: 'done' as const, text: done } : undefined;
    page(res, <EventPage session={sessionOf(res)} data={await eventPage(deps, req.params.eventId, { reveal: false, notice })} />);
  };
}

/** The event's page with its personal values shown: an admin's, audited. */
function revealEvent(deps: ConsoleDeps): Handler {
  return async (req, res) => {
    const data = await eventPage(deps, req.params.eventId, { reveal: true });
    await audit(deps.db, { actor: actorOf(sessionOf(res)), action: 'revealed personal values', target: req.params.eventId });
    deps.logger.warn({ eventId: req.params.eventId, by: actorOf(sessionOf(res)) }, 'console: personal values revealed');
    page(res, <EventPage session={sessionOf(res)} data={{ ...data, audit: await auditOf(deps.db, req.params.eventId) }} />);
  };
}

/** An action's confirmation: what it will do, in words (a signal's argument checked first, as the flow declares it). */
function confirmAction({ operations }: ConsoleDeps): Handler {
  return async (req, res) => {
    const { eventId } = req.params;
    const action = actionOf(req.params.action!);
    const given = takenBy(action, { signal: text(req, 'signal') ?? '', data: signalData(req.query) });
    const what = await action.confirm(operations, eventId, given as ActionInput);
    // What the confirmation's form sends back, beside the reason it asks.
    const fields = Object.fromEntries(
      Object.entries(given).flatMap(([name, value]) => (value === undefined ? [] : [[name, name === 'data' ? JSON.stringify(value) : String(value)]])),
    );
    const needsReason = action.fields.some((field) => field.name === 'reason');
    page(res, <ConfirmPage session={sessionOf(res)} eventId={eventId} action={action.name} what={what} fields={fields} needsReason={needsReason} />);
  };
}

/** Does a confirmed action, audits it and goes back to the event; a refusal shows on the event's page. */
function doAction(deps: ConsoleDeps): Handler {
  const { operations } = deps;
  return async (req, res) => {
    const { eventId } = req.params;
    const action = actionOf(req.params.action!);
    const session = sessionOf(res);
    const form = req.body as Record<string, unknown>;
    const reason = typeof form.reason === 'string' ? form.reason.trim() : '';
    const by = actorOf(session);
    try {
      // The form's fields the action takes; the operator's reason with who gave it (blank stays blank, for the operation to refuse).
      const given = {
        signal: form.signal,
        data: typeof form.data === 'string' ? jsonOf(form.data) : undefined,
        reason: reason && `${reason} (console, by ${by})`,
      };
      const answer = await action.run(operations, eventId, readActionInput(action, takenBy(action, given)), by);
      if (action.undone?.(answer)) throw new OperationRejectedError(action.said(eventId, answer));
    } catch (error) {
      if (!(error instanceof OperationRejectedError) && toProblem(error).status >= 500) throw error;
      const data = await eventPage(deps, eventId, { reveal: false, notice: { kind: 'error', text: toProblem(error).detail } });
      page(res.status(toProblem(error).status), <EventPage session={session} data={data} />);
      return;
    }
    const what = action.name === 'signal' ? `sent ${String(form.signal)}` : action.name;
    await audit(deps.db, { actor: by, action: what, target: eventId, detail: { reason: reason || undefined } });
    deps.logger.warn({ eventId, action: action.name, by }, 'console action');
    res.redirect(303, `${eventPath(eventId)}?done=${action.name}`);
  };
}

/** Of what a form gives, the fields the action takes. */
function takenBy(action: EventAction, given: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(action.fields.map((field) => [field.name, given[field.name]]));
}

/** Everything the event page shows, each part on its own: Temporal away still shows the stored delivery. */
async function eventPage(
  { db, operations }: ConsoleDeps,
  eventId: string,
  options: { reveal: boolean; notice?: EventPageData['notice'] },
): Promise<EventPageData> {
  const listed = await listedEvent(db, eventId);
  let view: EventView | undefined;
  let viewError: string | undefined;
  try {
    view = await withinTime(operations.show(eventId), TEMPORAL_WAIT_MS);
  } catch (error) {
    if (!(error instanceof EventNotFoundError)) viewError = `Temporal could not be asked: ${errorLine(error)}`;
  }
  if (!listed && !view) throw new EventNotFoundError({ eventId: eventId, why: 'neither the body store nor Temporal has it' });
  const stored = listed ? await loadBodyByWorkflowId(db, eventId) : undefined;
  const verification = stored ? await operations.verify(eventId).catch((error: unknown) => ({ error: errorLine(error) })) : undefined;
  return {
    eventId,
    listed,
    view,
    viewError,
    delivery: stored && decodeDelivery(stored, { reveal: options.reveal }),
    verification,
    signals: (view && flowNamed(view.workflowType)?.signals) ?? [],
    audit: await auditOf(db, eventId),
    notice: options.notice,
  };
}

/** How long the event page waits for Temporal before it shows the rest without the workflow. */
const TEMPORAL_WAIT_MS = 3000;
