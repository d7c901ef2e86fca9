import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import type { BodyLimits } from '../config';
import {
  AddressListUnavailableError,
  AddressNotAllowedError,
  BatchItemsRefusedError,
  BatchNotRecordedError,
  EventNotRecordedError,
  MAX_LISTED_REFUSALS,
  MalformedEventError,
  UnsupportedContentTypeError,
  type RecordedItem,
} from '../core/delivery-errors';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';
import { checkEventIdentity } from '../providers/identity';
import type { Source, SourceRegistry } from '../providers/registry';
import type { Checked, Delivery, VerifiedEvent } from '../providers/types';
import type { EventStarter, ReceivedEvent, StartResult } from '../intake/port';
import type { AddressAllowlists } from './address-allowlists';
import { bodyGuards } from './body-guards';
import type { Metrics } from './metrics';
import type { RefusalLog } from '../db/refusals';
import { problemType, sendProblem, toProblem } from './problem';

/**
 * `POST /webhooks/:source`: the body guards (./body-guards.ts), then the source's adapter verifies the
 * raw bytes, and each event is started (`starter`); answered 202, 200 for a duplicate, or a problem
 * counted by source and outcome and worded for the provider that will retry it.
 */
export function createWebhookRouter(deps: {
  sources: SourceRegistry;
  starter: EventStarter;
  limits: BodyLimits;
  metrics: Metrics;
  logger: Logger;
  now: () => Date;
  refusals?: RefusalLog;
  allowlists?: AddressAllowlists;
}): express.Router {
  const { sources, starter, metrics, logger, now, refusals, allowlists } = deps;

  const selectSource: RequestHandler<{ source: string }> = (req, res, next) => {
    const source = sources.get(req.params.source);
    const contentType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (!contentType || !source.adapter.contentTypes.includes(contentType)) {
      throw new UnsupportedContentTypeError({ source: source.name, contentType: contentType, accepted: source.adapter.contentTypes });
    }
    res.locals.source = source;
    next();
  };

  // A source that keeps to its provider's published addresses: counted, and in `enforce` mode refused
  // before a byte of the body is read.
  const checkAddress: RequestHandler = (req, res, next) => {
    const source = res.locals.source as Source;
    const mode = allowlists?.modeOf(source.name);
    if (!mode) return next();
    const verdict = allowlists!.verdict(source.name, req.ip);
    metrics.allowlist.inc({ source: source.name, verdict });
    if (mode === 'enforce' && verdict === 'outside') throw new AddressNotAllowedError({ source: source.name });
    if (mode === 'enforce' && verdict === 'unknown') throw new AddressListUnavailableError({ source: source.name });
    next();
  };

  // One span per delivery; the Temporal client interceptor carries it into the workflow and its
  // activities, so one trace covers the event from this request to its last side effect.
  const tracer = trace.getTracer('durable-webhooks');
  const receive: RequestHandler = (req, res) => {
    const source = res.locals.source as Source;
    return tracer.startActiveSpan(
      `POST /webhooks/${source.name}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'http.route': '/webhooks/:source', 'webhook.source': source.name } },
      async (span) => {
        try {
          await deliver(req, res, source, span);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  };

  const deliver = async (req: Request, res: Response, source: Source, span: Span) => {
    const receivedAt = now();
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const { adapter } = source;
    const received = { rawBody, headers: req.headers, receivedAt };
    const checked = await adapter.check(received);
    metrics.verifications.inc({ source: source.name, secret: await secretThatSigned(source, received, checked) });
    const delivery = adapter.read(received, checked);
    if (delivery.challenge) {
      logger.info({ source: source.name }, 'challenge answered');
      res.status(200).type(delivery.challenge.contentType).send(delivery.challenge.body);
      return;
    }
    const body = { raw: rawBody, contentType: req.headers['content-type'], signatureHeaders: pickHeaders(req.headers, adapter.signatureHeaders) };
    const toReceived = (verified: VerifiedEvent): ReceivedEvent => {
      checkEventIdentity(verified, adapter, source);
      const { item: _item, body: itemBody, ...fields } = verified;
      const stored = itemBody ?? body;
      // An ID or type the signature does not cover: the same signed bytes under another one are a replay.
      const bodySha256 = adapter.fields.unsigned?.length ? createHash('sha256').update(stored.raw).digest('hex') : undefined;
      return { source: source.name, provider: adapter.kind, ...fields, ...(bodySha256 && { bodySha256 }), receivedAt: receivedAt.toISOString(), body: stored };
    };

    if (!adapter.batch) {
      const [verified] = delivery.events;
      if (!verified || delivery.events.length > 1) throw new Error(`The ${adapter.kind} adapter returned ${delivery.events.length} events for one delivery.`);
      const event = toReceived(verified);
      span.setAttributes({ 'webhook.event_id': event.id, 'webhook.event_type': event.type });
      const result = await start(event, source, req);
      span.setAttribute('webhook.outcome', result.status);
      if (adapter.acknowledgement) {
        res
          .status(result.status === 'duplicate' ? 200 : 202)
          .type(adapter.acknowledgement.contentType)
          .send(adapter.acknowledgement.body);
      } else {
        const { status, ...rest } = result;
        res.status(status === 'duplicate' ? 200 : 202).json({ status, eventId: event.id, ...rest });
      }
      return;
    }

    // A batch: every item is its own event, recorded on its own; the answer is 2xx only when each
    // one is recorded (new or duplicate), so a redelivery of a partly recorded batch records the rest.
    const refused = [...(delivery.refused ?? [])];
    const events: ReceivedEvent[] = [];
    for (const verified of delivery.events) {
      try {
        events.push(toReceived(verified));
      } catch (error) {
        if (!(error instanceof MalformedEventError)) throw error;
        refused.push({ index: verified.item ?? -1, reason: error.message });
      }
    }
    span.setAttributes({ 'webhook.batch_items': events.length + refused.length, 'webhook.batch_refused': refused.length });
    const recorded: RecordedItem[] = [];
    const notRecorded: string[] = [];
    let failure: unknown;
    await forEachLimited(events, BATCH_START_CONCURRENCY, async (event) => {
      try {
        const result = await start(event, source, req);
        recorded.push({ eventId: event.id, workflowId: result.workflowId, status: result.status });
      } catch (error) {
        if (!(error instanceof EventNotRecordedError)) throw error;
        notRecorded.push(event.id);
        failure = error;
      }
    });
    if (notRecorded.length > 0) throw new BatchNotRecordedError({ recorded: recorded, notRecorded: notRecorded }, { cause: failure });
    if (refused.length > 0)
      throw new BatchItemsRefusedError({
        source: source.name,
        recorded,
        refusedCount: refused.length,
        refused: refused.sort((a, b) => a.index - b.index).slice(0, MAX_LISTED_REFUSALS),
      });
    const status = recorded.some((item) => item.status !== 'duplicate') ? 202 : 200;
    span.setAttribute('webhook.outcome', status === 202 ? 'recorded' : 'duplicate');
    if (adapter.acknowledgement) res.status(status).type(adapter.acknowledgement.contentType).send(adapter.acknowledgement.body);
    else res.status(status).json({ status: 'recorded', events: recorded });
  };

  const start = async (event: ReceivedEvent, source: Source, req: Request): Promise<StartResult> => {
    const stopTimer = metrics.startSeconds.startTimer({ source: source.name });
    const result = await starter.start(event, source);
    stopTimer();
    metrics.deliveries.inc({ source: source.name, outcome: result.status });
    logger.info({ source: source.name, eventId: event.id, type: event.type, workflowId: result.workflowId }, `event ${result.status}`);
    // Answered 200 so the sender stops, but nothing was recorded: a refusal an operator should see.
    if (result.status === 'duplicate' && result.replayOf !== undefined) {
      recordRefusal(
        req,
        source.name,
        200,
        'replay',
        `The signed body of event ${result.replayOf} was sent again as event ${event.id} (${event.type}); nothing was started.`,
      );
    }
    return result;
  };

  const recordRefusal = (req: Request, source: string, status: number, reason: string, detail: string) =>
    // What the console's refused page shows: never the body, and of the headers only their names.
    refusals?.record({
      refusedAt: now(),
      source,
      path: req.originalUrl.split('?')[0]!,
      status,
      reason,
      detail,
      client: req.ip,
      headerNames: Object.keys(req.headers),
    });

  // The webhook route owns its errors: they are deliveries, counted by source and outcome, and
  // worded for the provider that will retry them.
  const handleDeliveryError: ErrorRequestHandler = (error, req, res, _next) => {
    // Answered already (a body too slow, cut while it was being read): nothing more to say.
    if (res.headersSent) return;
    // Refused before its body was read to the end: close the connection after the answer rather
    // than read (or wait for) the rest of it.
    if (!req.complete) res.set('Connection', 'close');
    const problem = toProblem(error, 'The event was not recorded; retry the delivery.');
    const source = (res.locals.source as Source | undefined)?.name ?? 'unknown';
    metrics.deliveries.inc({ source, outcome: problem.type.split(':').pop() });
    if (problem.status >= 500) {
      logger.error({ source, path: req.path, status: problem.status, error: errorLine(error) }, 'delivery not recorded');
    } else {
      // The detail names identifiers only (a header, a limit, another source), never the payload.
      logger.warn({ source, path: req.path, status: problem.status, problem: problem.type, detail: problem.detail }, 'delivery rejected');
      recordRefusal(req, source, problem.status, problem.type.split(':').pop()!, problem.detail);
    }
    sendProblem(res, problem);
  };

  const { refuseBeforeReading, limitLargeBodies, enforceBodyPace, readRawBody } = bodyGuards(
    deps.limits,
    (error, req, res) => handleDeliveryError(error, req, res, () => undefined),
    (res) => (res.locals.source as Source).maxBodyBytes,
  );
  const webhooks = express.Router();
  webhooks.post('/:source', selectSource, checkAddress, refuseBeforeReading, limitLargeBodies, enforceBodyPace, readRawBody, receive);
  webhooks.all('/:source', (_req, res) => {
    res.set('Allow', 'POST');
    sendProblem(res, { type: problemType('method-not-allowed'), title: 'Method not allowed', status: 405, detail: 'Webhooks are delivered with POST.' });
  });
  webhooks.use(handleDeliveryError);
  return webhooks;
}

/**
 * Which of a source's secrets signed an accepted delivery: `current`, or `previous` when only a
 * rotation's older secret or key verifies it (for a batch, when any item needed one), so an operator
 * sees when the old one is no longer used. Costs a second check only while a source has two.
 */
async function secretThatSigned(source: Source, delivery: Delivery, checked: Checked): Promise<'current' | 'previous'> {
  if (!source.currentOnly) return 'current';
  const withCurrent = await source.currentOnly.check(delivery).catch(() => undefined);
  return withCurrent && (withCurrent.refused?.length ?? 0) <= (checked.refused?.length ?? 0) ? 'current' : 'previous';
}

/** Items of one batch started at once: enough to answer a SendGrid batch of hundreds in time, few enough to keep Temporal's queue short. */
const BATCH_START_CONCURRENCY = 8;

/** Runs `task` for every item, at most `limit` at a time; rejects with the first error once the running ones settled. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  const lanes = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, lane));
  const rejected = lanes.find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
  if (rejected) throw rejected.reason;
}

function pickHeaders(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (typeof headers[name] === 'string' ? [[name, headers[name]]] : [])));
}
