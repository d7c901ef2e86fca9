import type { IncomingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { DEFAULT_LARGE_BODY_BYTES, DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT } from '../config';
import { TooManyLargeBodiesError, UnsupportedContentTypeError } from '../errors';
import { createLogger, type Logger } from '../logger';
import { checkEventIdentity } from '../providers/identity';
import type { Source, SourceRegistry } from '../providers/registry';
import type { EventOperations } from '../temporal/operations';
import type { EventStarter, ReceivedEvent } from '../temporal/start-event';
import { createAdminRouter, type Backfill } from './admin';
import { createApiRouter, type ApiDeps } from './api';
import { createCodecRouter, type CodecDeps } from './codec';
import { createMetrics } from './metrics';
import { problemType, sendProblem, toProblem } from './problem';

export interface AppDeps {
  sources: SourceRegistry;
  starter: EventStarter;
  /** Largest accepted body; larger ones get 413 before they are read in full. */
  maxBodyBytes: number;
  /**
   * Bodies over `thresholdBytes` (by Content-Length; a body without one counts too) are received at
   * most `maxInFlight` at a time; one more gets 503 and Retry-After before it is read, which bounds
   * the receiver's memory. @default LARGE_BODY_BYTES' and MAX_LARGE_BODIES_IN_FLIGHT's defaults
   */
  largeBodies?: { thresholdBytes: number; maxInFlight: number };
  /** The clock used for timestamp tolerance. @default () => new Date() */
  now?: () => Date;
  logger?: Logger;
  /** The `/admin` API; off (404) without it. */
  admin?: { operations: EventOperations; token: string; backfill?: Backfill };
  /** The remote codec endpoint (`/codec`); off (404) without it. */
  codec?: Omit<CodecDeps, 'logger'>;
  /** Our own `/v1` API; off (404) without it. */
  api?: Omit<ApiDeps, 'logger'>;
}

/**
 * The receiver: `POST /webhooks/:source` verifies the raw body, then starts the event's workflow.
 * A 2xx is sent only once Temporal has the event (202 started, 200 duplicate); the request never
 * waits for business processing.
 */
export function createApp(deps: AppDeps): Express {
  const { sources, starter, maxBodyBytes } = deps;
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger ?? createLogger('receiver');
  const metrics = createMetrics();

  const app = express();
  app.disable('x-powered-by');
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
        type: problemType('temporal-unavailable'),
        title: 'Temporal unavailable',
        status: 503,
        detail: 'Temporal cannot be reached; deliveries are answered 503 until it is back.',
      });
    }
  });

  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
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

  const largeBodies = deps.largeBodies ?? { thresholdBytes: DEFAULT_LARGE_BODY_BYTES, maxInFlight: DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT };
  let largeBodiesInFlight = 0;
  const limitLargeBodies: RequestHandler = (req, res, next) => {
    const length = Number(req.headers['content-length'] ?? Number.NaN);
    if (length <= largeBodies.thresholdBytes) return next();
    if (largeBodiesInFlight >= largeBodies.maxInFlight) throw new TooManyLargeBodiesError(largeBodies.maxInFlight);
    largeBodiesInFlight++;
    res.once('close', () => largeBodiesInFlight--);
    next();
  };

  const readRawBody = express.raw({ type: () => true, limit: maxBodyBytes });

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
    const verified = source.adapter.verify({ rawBody, headers: req.headers, receivedAt });
    checkEventIdentity(verified, source.adapter, source);
    span.setAttributes({ 'webhook.event_id': verified.id, 'webhook.event_type': verified.type });
    const event: ReceivedEvent = {
      source: source.name,
      provider: source.adapter.kind,
      ...verified,
      receivedAt: receivedAt.toISOString(),
      body: { raw: rawBody, contentType: req.headers['content-type'], signatureHeaders: pickHeaders(req.headers, source.adapter.signatureHeaders) },
    };

    const stopTimer = metrics.startSeconds.startTimer({ source: source.name });
    const result = await starter.start(event, source.workflowIdPrefix);
    stopTimer();
    metrics.deliveries.inc({ source: source.name, outcome: result.status });
    logger.info({ source: source.name, eventId: event.id, type: event.type, workflowId: result.workflowId }, `event ${result.status}`);

    span.setAttribute('webhook.outcome', result.status);
    if (result.status === 'started') {
      res.status(202).json({ status: 'started', eventId: event.id, workflowId: result.workflowId, runId: result.runId });
    } else {
      res.status(200).json({ status: 'duplicate', eventId: event.id, workflowId: result.workflowId, state: result.state });
    }
  };

  // The webhook route owns its errors: they are deliveries, counted by source and outcome, and
  // worded for the provider that will retry them.
  const handleDeliveryError: ErrorRequestHandler = (error, req, res, _next) => {
    const problem = toProblem(error, 'The event was not recorded; retry the delivery.');
    const source = (res.locals.source as Source | undefined)?.name ?? 'unknown';
    metrics.deliveries.inc({ source, outcome: problem.type.split(':').pop() });
    if (problem.status >= 500) {
      logger.error({ source, path: req.path, status: problem.status, error: describe(error) }, 'delivery not recorded');
    } else {
      logger.warn({ source, path: req.path, status: problem.status, problem: problem.type }, 'delivery rejected');
    }
    sendProblem(res, problem);
  };
  const webhooks = express.Router();
  webhooks.post('/:source', selectSource, limitLargeBodies, readRawBody, receive);
  webhooks.all('/:source', (_req, res) => {
    res.set('Allow', 'POST');
    sendProblem(res, { type: problemType('method-not-allowed'), title: 'Method not allowed', status: 405, detail: 'Webhooks are delivered with POST.' });
  });
  webhooks.use(handleDeliveryError);
  app.use('/webhooks', webhooks);

  if (deps.admin) app.use('/admin', createAdminRouter(deps.admin.operations, deps.admin.token, logger, deps.admin.backfill));
  if (deps.api) app.use('/v1', createApiRouter({ ...deps.api, logger }));
  if (deps.codec) app.use('/codec', createCodecRouter({ ...deps.codec, logger }));

  app.use((req, res) => {
    sendProblem(res, { type: problemType('not-found'), title: 'Not found', status: 404, detail: `No route for ${req.method} ${req.path}.` });
  });

  return app;
}

function pickHeaders(headers: IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (typeof headers[name] === 'string' ? [[name, headers[name]]] : [])));
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
