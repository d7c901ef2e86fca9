import express, { type Express, type Request, type Response } from 'express';
import { bodyLimits, loadReceiverConfig, type BodyLimits } from '../config';
import { isLoopbackHost } from '../core/env';
import { createLogger, type Logger } from '../core/logger';
import type { SourceRegistry } from '../providers/registry';
import type { EventStarter } from '../intake/port';
import type { AddressAllowlists } from './address-allowlists';
import { createAdminRouter, type AdminDeps } from './admin/router';
import { createApiRouter, type ApiDeps } from './api';
import { createCodecRouter, type CodecDeps } from './codec';
import { createMetrics, type Metrics } from './metrics';
import { problemType, sendProblem } from './problem';
import { createWebhookRouter } from './webhooks';
import type { ConsoleDeps } from './console/deps';
import { createConsoleRouter } from './console/router';
import type { RefusalLog } from '../db/refusals';

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
  largeBodies?: BodyLimits['largeBodies'];
  /**
   * How fast a body must arrive: after its first 5 s, at least `minRate` bytes a second on average,
   * and fast enough to finish its declared length within `timeoutMs`; else 408 and the connection
   * closed. @default MIN_BODY_RATE and REQUEST_TIMEOUT's defaults
   */
  bodyPace?: BodyLimits['bodyPace'];
  /** Express's `trust proxy` (TRUST_PROXY), for the client address of the per-address share. */
  trustProxy?: number | string[];
  /** Refuse (421) a request whose `Host` is not this machine (`ReceiverConfig.loopbackHostsOnly`). @default false */
  loopbackHostsOnly?: boolean;
  /** The receiver's Prometheus metrics, which it counts into; `serveMetrics` serves them apart. @default createMetrics() */
  metrics?: Metrics;
  /** The clock used for timestamp tolerance. @default () => new Date() */
  now?: () => Date;
  logger?: Logger;
  /** The `/admin` API; off (404) without it. */
  admin?: AdminDeps;
  /** The event console (`/console`); off (404) without it. */
  console?: ConsoleDeps;
  /** Where refused deliveries are kept for the console; not kept without it. */
  refusals?: RefusalLog;
  /** The published address lists of the sources that keep to them (ADDRESS_ALLOWLISTS). */
  allowlists?: AddressAllowlists;
  /** The remote codec endpoint (`/codec`); off (404) without it. */
  codec?: Omit<CodecDeps, 'logger'>;
  /** Our own `/v1` API; off (404) without it. */
  api?: Omit<ApiDeps, 'logger'>;
  /**
   * Where `/admin`, `/console`, `/codec` and `/v1` are served: beside the webhooks (`with-webhooks`), or only by
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

  const app = baseApp(deps);
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

  // Limits not given are the configuration's defaults, as an unconfigured receiver has them.
  const defaults = deps.largeBodies && deps.bodyPace ? undefined : bodyLimits(loadReceiverConfig({}));
  const limits = { maxBodyBytes, largeBodies: deps.largeBodies ?? defaults!.largeBodies, bodyPace: deps.bodyPace ?? defaults!.bodyPace };
  app.use('/webhooks', createWebhookRouter({ sources, starter, limits, metrics, logger, now, refusals: deps.refusals, allowlists: deps.allowlists }));

  if (deps.operatorRoutes !== 'apart') mountOperatorRoutes(app, deps, logger);
  app.use(notFound);
  return app;
}

/**
 * The operators' and applications' port (ADMIN_PORT): `/admin`, `/console`, `/codec` and `/v1`, with `/healthz`,
 * and no webhooks. Kept inside the cluster, it leaves the internet-facing port only `/webhooks`.
 */
export function createOperatorApp(deps: Pick<AppDeps, 'admin' | 'console' | 'codec' | 'api' | 'trustProxy' | 'loopbackHostsOnly' | 'logger'>): Express {
  const app = baseApp(deps);
  mountOperatorRoutes(app, deps, deps.logger ?? createLogger('receiver'));
  app.use(notFound);
  return app;
}

/**
 * What both ports are: Express that names no framework, caches nothing (no ETag to hash for every
 * answer), answers `/healthz`, and (`loopbackHostsOnly`) only requests addressed to this machine.
 */
function baseApp({ trustProxy, loopbackHostsOnly }: Pick<AppDeps, 'trustProxy' | 'loopbackHostsOnly'>): Express {
  const app = express();
  app.disable('x-powered-by');
  if (trustProxy !== undefined) app.set('trust proxy', trustProxy);
  app.disable('etag');
  if (loopbackHostsOnly) {
    app.use((req, res, next) => {
      if (isLoopbackHost(req.headers.host ?? '')) return next();
      sendProblem(res, {
        type: problemType('misdirected-request'),
        title: 'Misdirected request',
        status: 421,
        detail: 'npm run dev answers only requests addressed to this machine (localhost, 127.0.0.1 or [::1]): its development token and secrets are public.',
      });
    });
  }
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return app;
}

function mountOperatorRoutes(app: Express, deps: Pick<AppDeps, 'admin' | 'console' | 'codec' | 'api'>, logger: Logger): void {
  if (deps.admin) app.use('/admin', createAdminRouter(deps.admin, logger));
  if (deps.console) app.use('/console', createConsoleRouter(deps.console));
  if (deps.api) app.use('/v1', createApiRouter({ ...deps.api, logger }));
  if (deps.codec) app.use('/codec', createCodecRouter({ ...deps.codec, logger }));
}

function notFound(req: Request, res: Response): void {
  sendProblem(res, { type: problemType('not-found'), title: 'Not found', status: 404, detail: `No route for ${req.method} ${req.path}.` });
}
