import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { DEFAULT_LARGE_BODY_BYTES, DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT, DEFAULT_MIN_BODY_RATE, DEFAULT_REQUEST_TIMEOUT } from '../config';
import { durationMs } from '../config/env';
import type { NamedToken } from '../config';
import {
  BatchItemsRefusedError,
  BatchNotRecordedError,
  BodyTooSlowError,
  EventNotRecordedError,
  MalformedEventError,
  PayloadTooLargeError,
  TooManyLargeBodiesError,
  TooManyLargeBodiesFromAddressError,
  UnsupportedContentEncodingError,
  UnsupportedContentTypeError,
  type RecordedItem,
} from '../errors';
import { createLogger, type Logger } from '../logger';
import { errorLine } from '../redact';
import { checkEventIdentity } from '../providers/identity';
import type { Source, SourceRegistry } from '../providers/registry';
import type { EventOperations } from '../temporal/operations';
import type { EventStarter, ReceivedEvent, StartResult } from '../temporal/start-event';
import type { VerifiedEvent } from '../providers/types';
import { createAdminRouter, type AdminBackfills } from './admin';
import { createApiRouter, type ApiDeps } from './api';
import { createCodecRouter, type CodecDeps } from './codec';
import { createMetrics, type Metrics } from './metrics';
import { problemType, sendProblem, toProblem } from './problem';

export interface AppDeps {
  sources: SourceRegistry;
  starter: EventStarter;
  /** Largest accepted body; larger ones get 413 before they are read in full. */
  maxBodyBytes: number;
  /**
   * Bodies over `thresholdBytes` (by Content-Length; a body without one counts too) are received at
   * most `maxInFlight` at a time; one more gets 503 and Retry-After before it is read, which bounds
   * the receiver's memory; one client address gets at most `maxPerAddress` of them (429 beyond).
   * @default LARGE_BODY_BYTES', MAX_LARGE_BODIES_IN_FLIGHT's and MAX_LARGE_BODIES_PER_ADDRESS's defaults
   */
  largeBodies?: { thresholdBytes: number; maxInFlight: number; maxPerAddress: number };
  /**
   * How fast a body must arrive: after its first 5 s, at least `minRate` bytes a second on average,
   * and fast enough to finish its declared length within `timeoutMs`; else 408 and the connection
   * closed. @default MIN_BODY_RATE and REQUEST_TIMEOUT's defaults
   */
  bodyPace?: { minRate: number; timeoutMs: number };
  /** Express's `trust proxy` (TRUST_PROXY), for the client address of the per-address share. */
  trustProxy?: number | string[];
  /** The receiver's Prometheus metrics, which it counts into; `serveMetrics` serves them apart. @default createMetrics() */
  metrics?: Metrics;
  /** The clock used for timestamp tolerance. @default () => new Date() */
  now?: () => Date;
  logger?: Logger;
  /** The `/admin` API; off (404) without it. */
  admin?: { operations: EventOperations; tokens: NamedToken[]; backfills?: AdminBackfills };
  /** The remote codec endpoint (`/codec`); off (404) without it. */
  codec?: Omit<CodecDeps, 'logger'>;
  /** Our own `/v1` API; off (404) without it. */
  api?: Omit<ApiDeps, 'logger'>;
  /**
   * Where `/admin`, `/codec` and `/v1` are served: beside the webhooks (`with-webhooks`), or only by
   * `createOperatorApp` on ADMIN_PORT (`apart`). @default 'with-webhooks'
   */
  operatorRoutes?: 'with-webhooks' | 'apart';
}

/**
 * The receiver: `POST /webhooks/:source` verifies the raw body, then starts the event's workflow.
 * A 2xx is sent only once the event is durably recorded: its body and start committed to
 * PostgreSQL (202 accepted) or its workflow started in Temporal (202 started), by the starter's
 * ACKNOWLEDGE mode; 200 for a duplicate. The request never waits for business processing.
 */
export function createApp(deps: AppDeps): Express {
  const { sources, starter, maxBodyBytes } = deps;
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger ?? createLogger('receiver');
  const metrics = deps.metrics ?? createMetrics();

  const app = express();
  app.disable('x-powered-by');
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  // Nothing here is cached: no ETag to hash for every answer.
  app.disable('etag');

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (_req, res) => {
    if (await starter.ready()) {
      res.json({ status: 'ready' });
    } else {
      sendProblem(res, {
        type: problemType(starter.needs === 'Temporal' ? 'temporal-unavailable' : 'body-store-unavailable'),
        title: `${starter.needs} unavailable`,
        status: 503,
        detail: `${starter.needs} cannot be reached; deliveries are answered 503 until it is back.`,
      });
    }
  });

  const selectSource: RequestHandler<{ source: string }> = (req, res, next) => {
    const source = sources.get(req.params.source);
    const contentType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (!contentType || !source.adapter.contentTypes.includes(contentType)) {
      throw new UnsupportedContentTypeError(source.name, contentType, source.adapter.contentTypes);
    }
    res.locals.source = source;
    next();
  };

  const largeBodies = deps.largeBodies ?? { thresholdBytes: DEFAULT_LARGE_BODY_BYTES, maxInFlight: DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT, maxPerAddress: Math.ceil(DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT / 4) };
  let largeBodiesInFlight = 0;
  const largeBodiesByAddress = new Map<string, number>();
  const limitLargeBodies: RequestHandler = (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? Number.NaN);
    if (length <= largeBodies.thresholdBytes) return next();
    // A share per client address, so a few slow or hostile senders cannot hold every slot. Either
    // refusal is answered unread.
    const address = req.ip ?? 'unknown';
    const fromAddress = largeBodiesByAddress.get(address) ?? 0;
    const refusal =
      largeBodiesInFlight >= largeBodies.maxInFlight
        ? new TooManyLargeBodiesError(largeBodies.maxInFlight)
        : fromAddress >= largeBodies.maxPerAddress
          ? new TooManyLargeBodiesFromAddressError(largeBodies.maxPerAddress)
          : undefined;
    if (refusal) throw refusal;
    largeBodiesInFlight++;
    largeBodiesByAddress.set(address, fromAddress + 1);
    res.once('close', () => {
      largeBodiesInFlight--;
      const left = largeBodiesByAddress.get(address)! - 1;
      if (left === 0) largeBodiesByAddress.delete(address);
      else largeBodiesByAddress.set(address, left);
    });
    next();
  };

  // A body that cannot arrive in time is cut as soon as that is clear, not at REQUEST_TIMEOUT: after
  // a grace of 5 s it must have averaged MIN_BODY_RATE, and (with a declared length) the pace that
  // finishes it in time. Measured on the socket's bytes, checked twice a second.
  const pace = deps.bodyPace ?? { minRate: DEFAULT_MIN_BODY_RATE, timeoutMs: durationMs(DEFAULT_REQUEST_TIMEOUT, 'REQUEST_TIMEOUT') };
  const enforceBodyPace: RequestHandler = (req, res, next) => {
    if (req.complete) return next();
    const declared = Number(req.headers['content-length']);
    const rate = Math.max(pace.minRate, Number.isFinite(declared) ? declared / Math.max(1, (pace.timeoutMs - BODY_PACE_GRACE_MS) / 1000) : 0);
    const began = Date.now();
    const before = req.socket.bytesRead;
    const check = setInterval(() => {
      const elapsedMs = Date.now() - began;
      const received = req.socket.bytesRead - before;
      if (req.complete || elapsedMs <= BODY_PACE_GRACE_MS || received >= ((elapsedMs - BODY_PACE_GRACE_MS) / 1000) * rate) return;
      stop();
      // Answered as any refusal is (counted, logged, connection closed); then the socket goes, so
      // the body still being read ends too.
      handleDeliveryError(new BodyTooSlowError(received, Math.round(elapsedMs / 1000)), req, res, () => undefined);
      res.once('finish', () => req.socket.destroy());
    }, BODY_PACE_CHECK_MS);
    const stop = () => clearInterval(check);
    req.once('end', stop);
    res.once('close', stop);
    next();
  };

  // A compressed body (nothing here inflates) and one declared over the limit are refused before a
  // byte of them is read.
  const refuseBeforeReading: RequestHandler = (req, _res, next) => {
    const encoding = req.headers['content-encoding']?.trim().toLowerCase();
    const refusal =
      encoding && encoding !== 'identity'
        ? new UnsupportedContentEncodingError(encoding.slice(0, 100))
        : Number(req.headers['content-length']) > maxBodyBytes
          ? new PayloadTooLargeError(maxBodyBytes)
          : undefined;
    next(refusal);
  };
  const readRawBody = express.raw({ type: () => true, limit: maxBodyBytes, inflate: false });

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
    const delivery = await adapter.verify({ rawBody, headers: req.headers, receivedAt });
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
      const result = await start(event, source);
      span.setAttribute('webhook.outcome', result.status);
      if (adapter.acknowledgement) {
        res.status(result.status === 'duplicate' ? 200 : 202).type(adapter.acknowledgement.contentType).send(adapter.acknowledgement.body);
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
        const result = await start(event, source);
        recorded.push({ eventId: event.id, workflowId: result.workflowId, status: result.status });
      } catch (error) {
        if (!(error instanceof EventNotRecordedError)) throw error;
        notRecorded.push(event.id);
        failure = error;
      }
    });
    if (notRecorded.length > 0) throw new BatchNotRecordedError(recorded, notRecorded, { cause: failure });
    if (refused.length > 0) throw new BatchItemsRefusedError(source.name, recorded, refused.sort((a, b) => a.index - b.index));
    const status = recorded.some((item) => item.status !== 'duplicate') ? 202 : 200;
    span.setAttribute('webhook.outcome', status === 202 ? 'recorded' : 'duplicate');
    if (adapter.acknowledgement) res.status(status).type(adapter.acknowledgement.contentType).send(adapter.acknowledgement.body);
    else res.status(status).json({ status: 'recorded', events: recorded });
  };

  const start = async (event: ReceivedEvent, source: Source): Promise<StartResult> => {
    const stopTimer = metrics.startSeconds.startTimer({ source: source.name });
    const result = await starter.start(event, source);
    stopTimer();
    metrics.deliveries.inc({ source: source.name, outcome: result.status });
    logger.info({ source: source.name, eventId: event.id, type: event.type, workflowId: result.workflowId }, `event ${result.status}`);
    return result;
  };

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
    }
    sendProblem(res, problem);
  };
  const webhooks = express.Router();
  webhooks.post('/:source', selectSource, refuseBeforeReading, limitLargeBodies, enforceBodyPace, readRawBody, receive);
  webhooks.all('/:source', (_req, res) => {
    res.set('Allow', 'POST');
    sendProblem(res, { type: problemType('method-not-allowed'), title: 'Method not allowed', status: 405, detail: 'Webhooks are delivered with POST.' });
  });
  webhooks.use(handleDeliveryError);
  app.use('/webhooks', webhooks);

  if (deps.operatorRoutes !== 'apart') mountOperatorRoutes(app, deps, logger);
  app.use(notFound);
  return app;
}

/**
 * The operators' and applications' port (ADMIN_PORT): `/admin`, `/codec` and `/v1`, with `/healthz`,
 * and no webhooks. Kept inside the cluster, it leaves the internet-facing port only `/webhooks`.
 */
export function createOperatorApp(deps: Pick<AppDeps, 'admin' | 'codec' | 'api' | 'trustProxy' | 'logger'>): Express {
  const app = express();
  app.disable('x-powered-by');
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  app.disable('etag');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  mountOperatorRoutes(app, deps, deps.logger ?? createLogger('receiver'));
  app.use(notFound);
  return app;
}

function mountOperatorRoutes(app: Express, deps: Pick<AppDeps, 'admin' | 'codec' | 'api'>, logger: Logger): void {
  if (deps.admin) app.use('/admin', createAdminRouter(deps.admin.operations, deps.admin.tokens, logger, deps.admin.backfills));
  if (deps.api) app.use('/v1', createApiRouter({ ...deps.api, logger }));
  if (deps.codec) app.use('/codec', createCodecRouter({ ...deps.codec, logger }));
}

function notFound(req: Request, res: Response): void {
  sendProblem(res, { type: problemType('not-found'), title: 'Not found', status: 404, detail: `No route for ${req.method} ${req.path}.` });
}

/** Time a body has before its pace is checked, and how often it is checked. */
const BODY_PACE_GRACE_MS = 5000;
const BODY_PACE_CHECK_MS = 500;

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

