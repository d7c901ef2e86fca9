import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { Request, Response } from 'express';
import { BatchItemsRefusedError, BatchNotRecordedError, EventNotRecordedError, MalformedEventError, type RecordedItem } from '../core/delivery-errors';
import { checkEventIdentity } from '../providers/identity';
import type { Source, SourceRegistry } from '../providers/registry';
import type { Checked, Delivery, VerifiedDelivery, VerifiedEvent } from '../providers/types';
import type { BodyLimits } from '../config';
import type { Logger } from '../core/logger';
import type { RefusalLog } from '../db/refusals';
import type { EventStarter, ReceivedEvent, StartResult } from '../intake/port';

import type { AddressAllowlists } from './address-allowlists';
import type { Metrics } from './metrics';

/** What the webhook route uses: the sources, the intake's starter, the body limits, metrics, logs and refusals. */
export interface WebhookDeps {
  sources: SourceRegistry;
  starter: EventStarter;
  limits: BodyLimits;
  metrics: Metrics;
  logger: Logger;
  now: () => Date;
  refusals?: RefusalLog;
  allowlists?: AddressAllowlists;
}

/** Items of one batch started at once: enough to answer a SendGrid batch of hundreds in time, few enough to keep Temporal's queue short. */
const BATCH_START_CONCURRENCY = 8;

/**
 * One delivery, verified by its source's adapter: a challenge answered, its one event started, or
 * each item of a batch; answered 202, or 200 when nothing in it was new.
 */
export async function deliver(deps: WebhookDeps, req: Request, res: Response, source: Source, span: Span): Promise<void> {
  const receivedAt = deps.now();
  const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const { adapter } = source;
  const received = { rawBody, headers: req.headers, receivedAt };
  const checked = await adapter.check(received);
  deps.metrics.verifications.inc({ source: source.name, secret: await secretThatSigned(source, received, checked) });
  const delivery = adapter.read(received, checked);
  if (delivery.challenge) {
    deps.logger.info({ source: source.name }, 'challenge answered');
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
  if (adapter.batch) await deliverBatch(deps, req, res, source, span, { delivery, toReceived });
  else await deliverOne(deps, req, res, source, span, { delivery, toReceived });
}

type Verified = { delivery: VerifiedDelivery; toReceived: (verified: VerifiedEvent) => ReceivedEvent };

async function deliverOne(deps: WebhookDeps, req: Request, res: Response, source: Source, span: Span, { delivery, toReceived }: Verified): Promise<void> {
  const [verified] = delivery.events;
  if (!verified || delivery.events.length > 1)
    throw new Error(`The ${source.adapter.kind} adapter returned ${delivery.events.length} events for one delivery.`);
  const event = toReceived(verified);
  span.setAttributes({ 'webhook.event_id': event.id, 'webhook.event_type': event.type });
  const result = await start(deps, event, source, req);
  span.setAttribute('webhook.outcome', result.status);
  const { acknowledgement } = source.adapter;
  if (acknowledgement) {
    res
      .status(result.status === 'duplicate' ? 200 : 202)
      .type(acknowledgement.contentType)
      .send(acknowledgement.body);
  } else {
    const { status, ...rest } = result;
    res.status(status === 'duplicate' ? 200 : 202).json({ status, eventId: event.id, ...rest });
  }
}

/**
 * A batch: every item is its own event, recorded on its own; the answer is 2xx only when each one is
 * recorded (new or duplicate), so a redelivery of a partly recorded batch records the rest.
 */
async function deliverBatch(deps: WebhookDeps, req: Request, res: Response, source: Source, span: Span, { delivery, toReceived }: Verified): Promise<void> {
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
      const result = await start(deps, event, source, req);
      recorded.push({ eventId: event.id, workflowId: result.workflowId, status: result.status });
    } catch (error) {
      if (!(error instanceof EventNotRecordedError)) throw error;
      notRecorded.push(event.id);
      failure = error;
    }
  });
  if (notRecorded.length > 0) throw new BatchNotRecordedError({ recorded, notRecorded }, { cause: failure });
  if (refused.length > 0) {
    throw new BatchItemsRefusedError({ source: source.name, recorded, refused });
  }
  const status = recorded.some((item) => item.status !== 'duplicate') ? 202 : 200;
  span.setAttribute('webhook.outcome', status === 202 ? 'recorded' : 'duplicate');
  const { acknowledgement } = source.adapter;
  if (acknowledgement) res.status(status).type(acknowledgement.contentType).send(acknowledgement.body);
  else res.status(status).json({ status: 'recorded', events: recorded });
}

/** Starts one event through the intake, timed, counted and logged; a replay is answered 200 and recorded as a refusal. */
async function start(deps: WebhookDeps, event: ReceivedEvent, source: Source, req: Request): Promise<StartResult> {
  const stopTimer = deps.metrics.startSeconds.startTimer({ source: source.name });
  const result = await deps.starter.start(event, source);
  stopTimer();
  deps.metrics.deliveries.inc({ source: source.name, outcome: result.status });
  deps.logger.info({ source: source.name, eventId: event.id, type: event.type, workflowId: result.workflowId }, `event ${result.status}`);
  // Answered 200 so the sender stops, but nothing was recorded: a refusal an operator should see.
  if (result.status === 'duplicate' && result.replayOf !== undefined) {
    const detail = `The signed body of event ${result.replayOf} was sent again as event ${event.id} (${event.type}); nothing was started.`;
    recordRefusal(deps, req, source.name, 200, 'replay', detail);
  }
  return result;
}

/** What the console's refused page shows: never the body, and of the headers only their names. */
export function recordRefusal(deps: WebhookDeps, req: Request, source: string, status: number, reason: string, detail: string): void {
  const path = req.originalUrl.split('?')[0]!;
  deps.refusals?.record({ refusedAt: deps.now(), source, path, status, reason, detail, client: req.ip, headerNames: Object.keys(req.headers) });
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
