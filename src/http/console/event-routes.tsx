import { randomUUID } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { EventNotFoundError, OperationRejectedError } from '../../core/errors';
import { errorLine } from '../../core/redact';
import { audit, auditOf } from '../../db/console-sessions';
import { loadBodyByWorkflowId } from '../../db/event-bodies';
import { listedEvent } from '../../db/event-list';
import { flowNamed } from '../../flows';
import type { EventView } from '../../temporal/event-view';
import { parseResetTarget } from '../../temporal/reset-points';
import { toProblem } from '../problem';
import { actionOf, CONFIRM, DONE, signalData, type EventAction } from './actions';
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
    const done = text(req, 'done');
    const notice = done && DONE[done as EventAction] ? { kind: 'done' as const, text: DONE[done as EventAction] } : undefined;
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

/** An action's confirmation: what it will do, in words; a signal's data checked first, as the flow declares it. */
function confirmAction({ operations }: ConsoleDeps): Handler {
  return async (req, res) => {
    const { eventId } = req.params;
    const action = actionOf(req.params.action!);
    const fields: Record<string, string> = {};
    let what: string;
    if (action === 'signal') {
      const name = text(req, 'signal') ?? '';
      const data = signalData(req.query);
      fields.signal = name;
      if (data !== undefined) fields.data = JSON.stringify(data);
      const signal = flowNamed((await operations.show(eventId)).workflowType)?.signals.find((each) => each.name === name);
      if (!signal) throw new OperationRejectedError(`Event ${eventId}'s flow has no signal "${name}".`);
      const checked = signal.read(data, { workflowId: eventId });
      if (!checked.ok) throw new OperationRejectedError(`${checked.error}.`);
      what = `Sends ${name} to event ${eventId}${data === undefined ? '' : ` with ${JSON.stringify(checked.value)}`}: it ${signal.description}.`;
    } else {
      what = CONFIRM[action](eventId);
    }
    const needsReason = action !== 'signal' && action !== 'cancel';
    page(res, <ConfirmPage session={sessionOf(res)} eventId={eventId} action={action} what={what} fields={fields} needsReason={needsReason} />);
  };
}

/** Does a confirmed action, audits it and goes back to the event; a refusal shows on the event's page. */
function doAction(deps: ConsoleDeps): Handler {
  const { operations } = deps;
  return async (req, res) => {
    const { eventId } = req.params;
    const action = actionOf(req.params.action!);
    const session = sessionOf(res);
    const reason = typeof req.body.reason === 'string' ? (req.body.reason as string).trim() : '';
    const by = actorOf(session);
    // The operator's reason, and who gave it; blank stays blank, for the operation to refuse.
    const kept = reason && `${reason} (console, by ${by})`;
    try {
      switch (action) {
        case 'signal': {
          const data = typeof req.body.data === 'string' ? (JSON.parse(req.body.data as string) as unknown) : undefined;
          await operations.signal(eventId, String(req.body.signal), data);
          break;
        }
        case 'retry': {
          const result = await operations.apply('retry', eventId, { reason: kept, requestId: randomUUID() });
          if (result.outcome !== 'done') throw new OperationRejectedError(`Nothing was retried: the event is ${result.detail}.`);
          break;
        }
        case 'reset':
          await operations.reset(eventId, parseResetTarget('last-failure'), kept);
          break;
        case 'cancel':
          await operations.cancel(eventId);
          break;
        case 'erase':
          await operations.erase(eventId, { by, reason });
          break;
      }
    } catch (error) {
      if (!(error instanceof OperationRejectedError || error instanceof SyntaxError) && toProblem(error).status >= 500) throw error;
      const data = await eventPage(deps, eventId, { reveal: false, notice: { kind: 'error', text: toProblem(error).detail } });
      page(res.status(error instanceof SyntaxError ? 400 : toProblem(error).status), <EventPage session={session} data={data} />);
      return;
    }
    const what = action === 'signal' ? `sent ${String(req.body.signal)}` : action;
    await audit(deps.db, { actor: by, action: what, target: eventId, detail: { reason: reason || undefined } });
    deps.logger.warn({ eventId, action, by }, 'console action');
    res.redirect(303, `${eventPath(eventId)}?done=${action}`);
  };
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

/** `work`'s answer, or an error once `ms` have passed without one. */
async function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
