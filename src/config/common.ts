import { ConfigError } from '../core/errors';
import { durationMs, flag, splitList } from '../core/env';
import { dataDirOf } from '../core/paths';

/** What every process reads (the receiver, the worker and the CLI), and the parsers they share. */

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

/** Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later: eight attempts over about 28 hours. */
export const DEFAULT_DELIVERY_SCHEDULE = '0s 5s 5m 30m 2h 5h 10h 10h';

export interface LoadOptions {
  /**
   * Fill unset secrets with the public development values, and allow development-only settings.
   * Only `npm run dev`, `durable-webhooks send` and tests pass it.
   * @default false
   */
  development?: boolean;
  /**
   * With `development`: no ADMIN_TOKEN set gives the public DEVELOPMENT_ADMIN_TOKEN, so `/admin` and
   * the console work out of the box. Only `npm run dev` passes it. @default false
   */
  developmentAdminToken?: boolean;
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
    github: {
      token: env.GITHUB_TOKEN || undefined,
      apiUrl: providerApiUrl('GITHUB_API_URL', env.GITHUB_API_URL, development),
      hooks: hookPaths(env.GITHUB_HOOKS),
    },
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
  throw new ConfigError(
    `${name} must be an https URL (plain http only on loopback or in development): it carries the API key, not "${url.protocol}//${url.host}".`,
  );
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

/** The dev server serves its UI on the gRPC port + 1000 (7233 → 8233). */
function devServerUiUrl(address: string | undefined): string {
  const port = /^(?:127\.0\.0\.1|localhost):(\d+)$/.exec(address ?? '')?.[1];
  return `http://localhost:${port ? Number(port) + 1000 : 8233}`;
}

/** A `host:port` to serve metrics on; set empty, none. */
export function metricsAddressOf(env: NodeJS.ProcessEnv, name: string, fallback: string): string | undefined {
  const address = env[name] ?? fallback;
  if (address !== '' && !/^[\w.-]+:\d{1,5}$|^\[[\da-fA-F:]+\]:\d{1,5}$/.test(address)) {
    throw new ConfigError(`${name} must be host:port (or empty to turn metrics off), not "${address}".`);
  }
  return address || undefined;
}
