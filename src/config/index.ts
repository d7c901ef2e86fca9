import type { Duration } from '@temporalio/common';
import { ProviderKind, type FlowSettings } from '../../contracts';
import { ConfigError } from '../errors';
import { durationMs, flag, oneOf, portNumber, positiveDurationMs, positiveInteger, retentionMs, splitList } from './env';
import { dataDirOf } from './paths';
import { loadSources, type DevelopmentSecret, type SourceConfig } from './sources';
import type { Retention } from '../db/retention';

/**
 * One typed configuration per process, from shared parts: what every process reads, then the
 * receiver's edge and sources (./sources.ts), or the worker's downstream APIs. Variables are read
 * by ./env.ts; the worker reads WEBHOOKS_CONFIG only for a backfill into one of its Stripe sources.
 */

/** What every process reads: the receiver, the worker and the CLI. */
export interface CommonConfig {
  /** @default 'webhooks' */
  taskQueue: string;
  /** Where `npm run dev` keeps the Temporal SQLite file, and `npm run cluster` its files. @default '<project>/.data' */
  dataDir: string;
  /** PostgreSQL for the ledger, application rows and `/v1`; a process opens it whenever this is set. Unset means the embedded database, which only `npm run dev` may use. */
  databaseUrl: string | undefined;
  /** The Temporal Web UI, for links. @default the dev server's UI: http://localhost:8233 */
  temporalUiUrl: string;
  /** Lets endpoints live on loopback, private and link-local addresses. @default false */
  allowPrivateEndpoints: boolean;
  /** Milliseconds before each delivery attempt. @default immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h */
  deliveryScheduleMs: number[];
  /** Stripe's API: the worker's charges, and `backfill stripe`. */
  stripe: { secretKey: string | undefined; apiUrl: string | undefined };
  /** GitHub's API, for `backfill github`: a token, another base URL, and the hooks to list. */
  github: { token: string | undefined; apiUrl: string | undefined; hooks: string[] };
  /** Paddle's API, for `backfill paddle`: a key that may read events, and another base URL (the sandbox's). */
  paddle: { apiKey: string | undefined; apiUrl: string | undefined };
  /** Square's API, for `backfill square`: an access token that may read events, and another base URL (the sandbox's). */
  square: { token: string | undefined; apiUrl: string | undefined };
}

/** The receiver's settings: the common ones, its HTTP edge and its sources. */
export interface ReceiverConfig extends CommonConfig {
  /** Receiver port; 0 picks a free one. @default 3000 */
  port: number;
  /**
   * The address the receiver listens on: every interface (undefined), or `HOST`'s. `npm run dev`
   * signs with public development secrets, so it listens on loopback unless `HOST` says otherwise.
   * @default every interface; 127.0.0.1 in development
   */
  host: string | undefined;
  /**
   * ADMIN_PORT: `/admin`, `/codec` and `/v1` are served on this port (on `host` too) and no longer on
   * `port`, which then serves only the webhooks and the health checks. @default undefined: all on `port`
   */
  adminPort: number | undefined;
  /** Largest accepted body; every body goes to the body store, none to Temporal. @default 25 MiB */
  maxBodyBytes: number;
  /** Bodies over this many bytes count against `maxLargeBodiesInFlight`. @default 128 KiB */
  largeBodyBytes: number;
  /** Large bodies received at once; one more is answered 503 with Retry-After, unread. @default 8 */
  maxLargeBodiesInFlight: number;
  /** Large bodies one client address may send at once; one more is answered 429, unread. @default a quarter of `maxLargeBodiesInFlight`, rounded up */
  maxLargeBodiesPerAddress: number;
  /** After its first 5 seconds, a body must arrive at least this fast on average (bytes a second), or 408. @default 16 KiB */
  minBodyRate: number;
  /** Express's `trust proxy`: the proxies whose `X-Forwarded-For` names the client address. Off by default. */
  trustProxy: number | string[] | undefined;
  /** `host:port` of the receiver's `/metrics`, apart from the webhook port; undefined when set empty. @default 127.0.0.1:9470 */
  metricsAddress: string | undefined;
  /** A request's headers and body must arrive within this, or the connection is closed (slow clients). @default 30 s */
  requestTimeoutMs: number;
  /** Open connections beyond this are closed as they arrive. @default 1000 */
  maxConnections: number;
  /**
   * What a 2xx waits for: `database`, the body and its start committed to PostgreSQL (the workflow
   * starts right after, or a sweeper starts it); `temporal`, Temporal's confirmation of the start.
   */
  acknowledge: Acknowledge;
  sources: SourceConfig[];
  developmentSecrets: DevelopmentSecret[];
  /** Built-in sources left off because their secret is unset (always, outside development). */
  disabledSources: Array<{ name: string; env: string }>;
  /**
   * Bearer tokens for `/admin` (and `/codec`), each with a name that the erasure record keeps:
   * ADMIN_TOKEN is named `admin`, ADMIN_TOKENS lists `<name>:<token>`. The admin API is off without any.
   */
  adminTokens: NamedToken[];
  /** A bearer token for `/codec` only (the Temporal UI's proxy): it decodes payloads and can do nothing else. */
  codecToken: string | undefined;
  /** Bearer tokens for `/v1`, each with its named scope; the API is off without any. */
  apiTokens: ApiToken[];
}

export type Acknowledge = 'database' | 'temporal';
/**
 * A receiver with PostgreSQL (`npm run receiver`) answers at commit: measured, 5–7× the
 * acknowledgements of waiting for Temporal, as fast end to end, and open while Temporal is away
 * (docs/benchmarks.md). `npm run dev` waits for Temporal, whose dev server lives and dies with it,
 * so that a workflow exists once `send` is answered.
 */
export function defaultAcknowledge(development: boolean): Acknowledge {
  return development ? 'temporal' : 'database';
}

/** Time for a whole request, headers and body; a client that trickles its body is cut off after it. */
export const DEFAULT_REQUEST_TIMEOUT = '30s';
export const DEFAULT_MAX_CONNECTIONS = 1000;

/**
 * A `/v1` bearer token and the scope it acts in: endpoints, messages and idempotency keys belong
 * to the scope, so a token can be rotated (two tokens, one scope) without orphaning anything.
 */
export interface ApiToken {
  scope: string;
  token: string;
}

/** An admin token and the name it acts under. */
export interface NamedToken {
  name: string;
  token: string;
}

/** Admin, codec and API tokens are at least this long: guessed online they must stay out of reach. */
export const MIN_TOKEN_LENGTH = 32;

/** Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later: eight attempts over about 28 hours. */
export const DEFAULT_DELIVERY_SCHEDULE = '0s 5s 5m 30m 2h 5h 10h 10h';

/** GitHub's largest payload is 25 MB; every body goes to the body store, and Temporal gets only a few fields. */
export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024;
export const DEFAULT_LARGE_BODY_BYTES = 128 * 1024;
/** About 8 × 25 MiB of bodies being read, parsed and stored at once: see "Data and privacy" in the README for the measured peak. */
export const DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT = 8;
/** Bytes a second a body must average after its first seconds; with a declared length, also enough to finish in time. */
export const DEFAULT_MIN_BODY_RATE = 16 * 1024;

export interface LoadOptions {
  /**
   * Fill unset secrets with the public development values, and allow development-only settings.
   * Only `npm run dev`, `durable-webhooks send` and tests pass it.
   * @default false
   */
  development?: boolean;
}

/** Reads and validates what every process needs; throws `ConfigError` naming the bad setting. */
export function loadCommonConfig(env: NodeJS.ProcessEnv = process.env, { development = false }: LoadOptions = {}): CommonConfig {
  return {
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'webhooks',
    dataDir: dataDirOf(env),
    databaseUrl: env.DATABASE_URL || undefined,
    temporalUiUrl: (env.TEMPORAL_UI_URL || devServerUiUrl(env.TEMPORAL_ADDRESS)).replace(/\/$/, ''),
    allowPrivateEndpoints: flag(env, 'ALLOW_PRIVATE_ENDPOINTS'),
    deliveryScheduleMs: splitList(env.DELIVERY_SCHEDULE || DEFAULT_DELIVERY_SCHEDULE).map((step) => durationMs(step, 'DELIVERY_SCHEDULE')),
    stripe: { secretKey: env.STRIPE_SECRET_KEY || undefined, apiUrl: providerApiUrl('STRIPE_API_URL', env.STRIPE_API_URL, development) },
    github: { token: env.GITHUB_TOKEN || undefined, apiUrl: providerApiUrl('GITHUB_API_URL', env.GITHUB_API_URL, development), hooks: hookPaths(env.GITHUB_HOOKS) },
    paddle: { apiKey: env.PADDLE_API_KEY || undefined, apiUrl: providerApiUrl('PADDLE_API_URL', env.PADDLE_API_URL, development) },
    square: { token: env.SQUARE_ACCESS_TOKEN || undefined, apiUrl: providerApiUrl('SQUARE_API_URL', env.SQUARE_API_URL, development) },
  };
}

/**
 * A provider API's base URL, which our requests carry its key or token to: https, or plain http
 * only on loopback (a local stand-in, stripe-mock, a sidecar) or in development.
 */
function providerApiUrl(name: string, value: string | undefined, development: boolean): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be a URL, not "${value.slice(0, 100)}".`);
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && (loopback || development))) return value;
  throw new ConfigError(`${name} must be an https URL (plain http only on loopback or in development): it carries the API key, not "${url.protocol}//${url.host}".`);
}

/** A hook whose deliveries can be listed: `repos/<owner>/<repo>/hooks/<id>` or `orgs/<org>/hooks/<id>`. */
const HOOK_PATH = /^(?:repos\/[\w.-]+\/[\w.-]+|orgs\/[\w.-]+)\/hooks\/\d+$/;

/** `GITHUB_HOOKS`: hook paths separated by spaces. */
function hookPaths(value: string | undefined): string[] {
  const paths = splitList(value);
  const bad = paths.find((hook) => !HOOK_PATH.test(hook));
  if (bad !== undefined) throw new ConfigError(`GITHUB_HOOKS lists "${bad}"; each hook is repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>.`);
  return paths;
}

/** Reads and validates the receiver's configuration, sources included; throws `ConfigError` naming the bad setting. */
export function loadReceiverConfig(env: NodeJS.ProcessEnv = process.env, { development = false }: LoadOptions = {}): ReceiverConfig {
  const port = portNumber(env, 'PORT', 3000);
  const { sources, developmentSecrets, disabledSources } = loadSources(env, { development, port });
  const maxLargeBodiesInFlight = positiveInteger(env, 'MAX_LARGE_BODIES_IN_FLIGHT', DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT);
  return {
    ...loadCommonConfig(env, { development }),
    port,
    host: env.HOST || (development ? '127.0.0.1' : undefined),
    adminPort: env.ADMIN_PORT ? portNumber(env, 'ADMIN_PORT', 0) : undefined,
    maxBodyBytes: positiveInteger(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES),
    largeBodyBytes: positiveInteger(env, 'LARGE_BODY_BYTES', DEFAULT_LARGE_BODY_BYTES),
    maxLargeBodiesInFlight,
    maxLargeBodiesPerAddress: positiveInteger(env, 'MAX_LARGE_BODIES_PER_ADDRESS', Math.ceil(maxLargeBodiesInFlight / 4)),
    minBodyRate: positiveInteger(env, 'MIN_BODY_RATE', DEFAULT_MIN_BODY_RATE),
    trustProxy: trustProxy(env.TRUST_PROXY),
    requestTimeoutMs: positiveDurationMs(env, 'REQUEST_TIMEOUT', DEFAULT_REQUEST_TIMEOUT),
    metricsAddress: metricsAddressOf(env, 'RECEIVER_METRICS_ADDRESS', DEFAULT_RECEIVER_METRICS_ADDRESS),
    maxConnections: positiveInteger(env, 'MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS),
    acknowledge: oneOf(env, 'ACKNOWLEDGE', ['database', 'temporal'] as const, defaultAcknowledge(development)),
    sources,
    developmentSecrets,
    disabledSources,
    adminTokens: adminTokens(env),
    codecToken: env.CODEC_TOKEN ? longToken('CODEC_TOKEN', env.CODEC_TOKEN) : undefined,
    apiTokens: apiTokens(env.API_TOKENS),
  };
}

/**
 * `TRUST_PROXY`: a number of proxy hops, or addresses and subnets (`10.0.0.0/8`, `loopback`) separated
 * by commas or spaces, as Express's `trust proxy` takes them. `true` (any sender may name any address) is refused.
 */
function trustProxy(value: string | undefined): number | string[] | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = splitList(value.replace(/,/g, ' '));
  const named = new Set(['loopback', 'linklocal', 'uniquelocal']);
  const bad = entries.find((entry) => !named.has(entry) && !/^[\d.:a-fA-F]+(?:\/\d{1,3})?$/.test(entry));
  if (bad !== undefined) throw new ConfigError(`TRUST_PROXY lists "${bad.slice(0, 50)}"; give a number of hops, or addresses and subnets (10.0.0.0/8, loopback).`);
  return entries;
}

/** The dev server serves its UI on the gRPC port + 1000 (7233 → 8233). */
function devServerUiUrl(address: string | undefined): string {
  const port = /^(?:127\.0\.0\.1|localhost):(\d+)$/.exec(address ?? '')?.[1];
  return `http://localhost:${port ? Number(port) + 1000 : 8233}`;
}


const SCOPE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `API_TOKENS="shop:tok_… billing:tok_…"`: `<scope>:<token>` entries separated by spaces or commas, each token at least 32 characters. */
function apiTokens(value: string | undefined): ApiToken[] {
  return namedTokens('API_TOKENS', value, 'scope').map(({ name, token }) => ({ scope: name, token: longToken(`API_TOKENS' token for the scope "${name}"`, token) }));
}

/** ADMIN_TOKEN (named `admin`) and `ADMIN_TOKENS="alice:… ci:…"`, each at least 32 characters. */
function adminTokens(env: NodeJS.ProcessEnv): NamedToken[] {
  const named = namedTokens('ADMIN_TOKENS', env.ADMIN_TOKENS, 'name').map(({ name, token }) => ({ name, token: longToken(`ADMIN_TOKENS' token "${name}"`, token) }));
  const tokens = [...(env.ADMIN_TOKEN ? [{ name: 'admin', token: longToken('ADMIN_TOKEN', env.ADMIN_TOKEN) }] : []), ...named];
  if (new Set(tokens.map(({ token }) => token)).size !== tokens.length) throw new ConfigError('ADMIN_TOKEN and ADMIN_TOKENS name the same token twice.');
  if (new Set(tokens.map(({ name }) => name)).size !== tokens.length) throw new ConfigError('ADMIN_TOKENS names one name twice (ADMIN_TOKEN is "admin").');
  return tokens;
}

/** `<name>:<token>` entries separated by spaces or commas. */
function namedTokens(variable: string, value: string | undefined, what: 'scope' | 'name'): NamedToken[] {
  const tokens = splitList(value).map((entry) => {
    const colon = entry.indexOf(':');
    const name = entry.slice(0, colon);
    const token = entry.slice(colon + 1);
    if (colon === -1 || !SCOPE_NAME.test(name) || token === '') {
      throw new ConfigError(`${variable} must list <${what}>:<token> entries (for example "shop:tok_…"); a ${what} is lower-case letters, digits, "-" or "_".`);
    }
    return { name, token };
  });
  if (new Set(tokens.map(({ token }) => token)).size !== tokens.length) throw new ConfigError(`${variable} lists the same token twice.`);
  return tokens;
}

function longToken(what: string, token: string): string {
  if (token.length < MIN_TOKEN_LENGTH) throw new ConfigError(`${what} must be at least ${MIN_TOKEN_LENGTH} characters (for example: openssl rand -hex 32).`);
  return token;
}

/** The worker's settings: the common ones and what its activities call; it never reads the receiver's sources. */
export interface WorkerConfig extends CommonConfig {
  email:
    | { provider: 'resend'; from: string; apiKey: string; baseUrl: string | undefined }
    | { provider: 'smtp'; from: string; url: string }
    | { provider: 'capture'; from: string };
  settings: FlowSettings;
  /** `host:port` of the worker's Prometheus metrics (the SDK's and ours); undefined when set empty. @default 127.0.0.1:9464 */
  metricsAddress: string | undefined;
  /**
   * The Worker Deployment Version this worker is (WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID): with one,
   * it takes only tasks routed to its build (docs/deploys.md); without, it is unversioned.
   */
  deployment: WorkerDeployment | undefined;
  /** How long the body store keeps bodies (BODY_RETENTION) and the rows that find duplicates (DEDUPE_RETENTION). */
  retention: Retention;
  /**
   * The Stripe sources of WEBHOOKS_CONFIG (with their API keys), read only when a backfill into one
   * of them runs: the worker does not read the sources file to start.
   */
  stripeSources: () => SourceConfig[];
}

export interface WorkerDeployment {
  name: string;
  buildId: string;
}

export const DEFAULT_WORKER_METRICS_ADDRESS = '127.0.0.1:9464';
/** The receiver's `/metrics` has its own address, on loopback unless set: never the public webhook port. */
export const DEFAULT_RECEIVER_METRICS_ADDRESS = '127.0.0.1:9470';

/** A `host:port` to serve metrics on; set empty, none. */
function metricsAddressOf(env: NodeJS.ProcessEnv, name: string, fallback: string): string | undefined {
  const address = env[name] ?? fallback;
  if (address !== '' && !/^[\w.-]+:\d{1,5}$|^\[[\da-fA-F:]+\]:\d{1,5}$/.test(address)) {
    throw new ConfigError(`${name} must be host:port (or empty to turn metrics off), not "${address}".`);
  }
  return address || undefined;
}

export const DEFAULT_WORKER_DEPLOYMENT_NAME = 'durable-webhooks';

/**
 * WORKER_BUILD_ID (the image tag, say) makes the worker a version of the deployment
 * WORKER_DEPLOYMENT_NAME. Temporal names a version `<deployment>.<build ID>`, so the name has no dot.
 */
export function workerDeploymentOf(env: NodeJS.ProcessEnv): WorkerDeployment | undefined {
  const buildId = env.WORKER_BUILD_ID?.trim();
  if (!buildId) {
    if (env.WORKER_DEPLOYMENT_NAME) throw new ConfigError('WORKER_DEPLOYMENT_NAME needs WORKER_BUILD_ID: set the build ID (the image tag, say) to version this worker, or neither.');
    return undefined;
  }
  const name = env.WORKER_DEPLOYMENT_NAME || DEFAULT_WORKER_DEPLOYMENT_NAME;
  if (!/^[\w-]{1,200}$/.test(name)) throw new ConfigError(`WORKER_DEPLOYMENT_NAME must be letters, digits, "-" and "_" (no dot: Temporal writes a version as <deployment>.<build ID>), not "${name}".`);
  if (!/^[\w.+-]{1,200}$/.test(buildId)) throw new ConfigError(`WORKER_BUILD_ID must be letters, digits, ".", "+", "-" and "_" (an image tag or a commit, say), not "${buildId}".`);
  return { name, buildId };
}

export const DEFAULT_EMAIL_FROM = 'durable-webhooks <webhooks@example.com>';

/** The worker's settings; only `development` may capture email to files instead of sending it. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env, { development = false }: LoadOptions = {}): WorkerConfig {
  const from = env.EMAIL_FROM || DEFAULT_EMAIL_FROM;
  const provider = env.EMAIL_PROVIDER || (development ? 'capture' : '');
  let email: WorkerConfig['email'];
  if (provider === 'resend') {
    if (!env.RESEND_API_KEY) throw new ConfigError('EMAIL_PROVIDER=resend needs RESEND_API_KEY.');
    email = { provider, from, apiKey: env.RESEND_API_KEY, baseUrl: env.RESEND_BASE_URL || undefined };
  } else if (provider === 'smtp') {
    if (!env.SMTP_URL) throw new ConfigError('EMAIL_PROVIDER=smtp needs SMTP_URL (smtp://user:pass@host:port).');
    email = { provider, from, url: env.SMTP_URL };
  } else if (provider === 'capture' && development) {
    email = { provider, from };
  } else {
    throw new ConfigError(`EMAIL_PROVIDER must be resend or smtp${development ? ' (or capture)' : ''}, not "${provider}".`);
  }

  const reviewTimeout = env.REVIEW_TIMEOUT || '24h';
  positiveDurationMs(env, 'REVIEW_TIMEOUT', '24h');

  const retention = { bodyMs: retentionMs(env, 'BODY_RETENTION', '30d'), dedupeMs: retentionMs(env, 'DEDUPE_RETENTION', '400d') };
  if (retention.dedupeMs !== null && (retention.bodyMs === null || retention.dedupeMs < retention.bodyMs)) {
    throw new ConfigError('DEDUPE_RETENTION must be at least BODY_RETENTION: a row that finds duplicates outlives the body it stores.');
  }

  return {
    ...loadCommonConfig(env, { development }),
    email,
    retention,
    metricsAddress: metricsAddressOf(env, 'WORKER_METRICS_ADDRESS', DEFAULT_WORKER_METRICS_ADDRESS),
    deployment: workerDeploymentOf(env),
    stripeSources: () => loadSources(env, { development, port: 0 }).sources.filter((source) => source.kind === ProviderKind.STRIPE),
    settings: {
      reviewThreshold: env.REVIEW_THRESHOLD ? positiveInteger(env, 'REVIEW_THRESHOLD', 0) : null,
      reviewTimeout: reviewTimeout as Duration,
      paymentRetryWindowMs: positiveDurationMs(env, 'PAYMENT_RETRY_WINDOW', '7d'),
      notifyEmail: env.NOTIFY_EMAIL || null,
    },
  };
}
