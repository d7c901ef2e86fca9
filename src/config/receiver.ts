import { ConfigError } from '../core/errors';
import { isLoopbackHost, oneOf, portNumber, positiveDurationMs, positiveInteger, splitList } from '../core/env';
import { loadCommonConfig, metricsAddressOf, type CommonConfig, type LoadOptions } from './common';
import type { SourceConfig } from '../providers/source';
import { loadSources, type DevelopmentSecret } from './sources';
import { providerOf, PROVIDERS } from '../providers/index';
import { adminTokens, apiTokens, DEVELOPMENT_ADMIN_TOKEN, longToken, viewerTokens, type ApiToken, type NamedToken } from './tokens';

/** The receiver's configuration: its HTTP edge, its sources (./sources.ts) and its tokens (./tokens.ts). */

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
   * Requests whose `Host` names another machine are refused (421): `npm run dev` on loopback, where a
   * page whose name rebinds to 127.0.0.1 could otherwise use the public development token and secrets.
   */
  loopbackHostsOnly: boolean;
  /**
   * ADMIN_PORT: `/admin`, `/console`, `/codec` and `/v1` are served on this port (on `host` too) and no longer on
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
  /**
   * How long a signing secret replaced in its file (`<NAME>_FILE`) is still accepted after the
   * receiver reads the new one (SECRET_ROTATION_GRACE). @default 24 hours
   */
  secretRotationGraceMs: number;
  /**
   * Sources that keep to the addresses their provider publishes (ADDRESS_ALLOWLISTS="github:enforce
   * stripe:count"): `count` only counts deliveries from outside them, `enforce` refuses those (403).
   */
  addressAllowlists: AddressAllowlist[];
  /** How often each published list is read again (ADDRESS_ALLOWLIST_REFRESH); the last good one is kept when a read fails. @default 1 hour */
  addressAllowlistRefreshMs: number;
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
   * ADMIN_TOKEN is named `admin`, ADMIN_TOKENS lists `<name>:<token>`. The admin API is off without any,
   * but under `npm run dev`, where DEVELOPMENT_ADMIN_TOKEN stands in.
   */
  adminTokens: NamedToken[];
  /** VIEWER_TOKENS: console sign-ins that see everything and act on nothing. */
  viewerTokens: NamedToken[];
  /** The event console at `/console` (on ADMIN_PORT when set): on with any admin or viewer token unless CONSOLE=off. */
  console: { enabled: boolean; sessionTtlMs: number };
  /** Alerts on failure groups and dead letters (ALERT_*); off unless an alert URL is set. */
  alerts: AlertConfig | undefined;
  /** A bearer token for `/codec` only (the Temporal UI's proxy): it decodes payloads and can do nothing else. */
  codecToken: string | undefined;
  /** Bearer tokens for `/v1`, each with its named scope; the API is off without any. */
  apiTokens: ApiToken[];
}

/** Where alerts go and when they are sent. */
export interface AlertConfig {
  /** ALERT_WEBHOOK_URL and ALERT_WEBHOOK_SECRET: a signed Standard Webhooks message, with our outbound delivery's retries and attempts. */
  webhook?: { url: string; secret: string };
  /** ALERT_SLACK_WEBHOOK_URL: a Slack incoming webhook, sent through the same delivery. */
  slackUrl?: string;
  /** ALERT_INTERVAL: how often a receiver looks for what to alert. @default 30 s */
  intervalMs: number;
  /** ALERT_GROUP_THRESHOLD: a group alerted as new is alerted once more when it reaches this many events. @default 100 */
  groupThreshold: number;
  /** CONSOLE_URL: the console's public URL, for links in alerts. */
  consoleUrl?: string;
}

/**
 * ACKNOWLEDGE: what a 2xx waits for (src/intake/starter.ts): `temporal`, the workflow's start;
 * `database`, the body's commit to PostgreSQL.
 */
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

/** GitHub's largest payload is 25 MB; every body goes to the body store, and Temporal gets only a few fields. */
export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024;
export const DEFAULT_LARGE_BODY_BYTES = 128 * 1024;
/** About 8 × 25 MiB of bodies being read, parsed and stored at once: see "Data and privacy" in the README for the measured peak. */
export const DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT = 8;
/** Bytes a second a body must average after its first seconds; with a declared length, also enough to finish in time. */
export const DEFAULT_MIN_BODY_RATE = 16 * 1024;

/** Reads and validates the receiver's configuration, sources included; throws `ConfigError` naming the bad setting. */
export function loadReceiverConfig(
  env: NodeJS.ProcessEnv = process.env,
  { development = false, developmentAdminToken = false }: LoadOptions = {},
): ReceiverConfig {
  const port = portNumber(env, 'PORT', 3000);
  const { sources, developmentSecrets, disabledSources } = loadSources(env, { development, port });
  const maxLargeBodiesInFlight = positiveInteger(env, 'MAX_LARGE_BODIES_IN_FLIGHT', DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT);
  const configured = adminTokens(env);
  const admins = development && developmentAdminToken && configured.length === 0 ? [{ name: 'admin', token: DEVELOPMENT_ADMIN_TOKEN }] : configured;
  const viewers = viewerTokens(env, admins);
  const host = env.HOST || (development ? '127.0.0.1' : undefined);
  const onLoopback = host !== undefined && isLoopbackHost(host);
  if (development && !onLoopback) {
    const publicValues = [
      ...developmentSecrets.map((secret) => secret.env),
      ...(admins.some(({ token }) => token === DEVELOPMENT_ADMIN_TOKEN) ? ['ADMIN_TOKEN'] : []),
    ];
    if (publicValues.length > 0) {
      throw new ConfigError(
        `HOST=${host ?? '(every interface)'} would let other machines reach npm run dev, whose development token and secrets are public: set ADMIN_TOKEN and ${publicValues.filter((name) => name !== 'ADMIN_TOKEN').join(', ') || 'every source secret'}, or leave HOST on loopback.`,
      );
    }
  }
  return {
    ...loadCommonConfig(env, { development }),
    port,
    host,
    loopbackHostsOnly: development && onLoopback,
    adminPort: env.ADMIN_PORT ? portNumber(env, 'ADMIN_PORT', 0) : undefined,
    maxBodyBytes: positiveInteger(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES),
    largeBodyBytes: positiveInteger(env, 'LARGE_BODY_BYTES', DEFAULT_LARGE_BODY_BYTES),
    maxLargeBodiesInFlight,
    maxLargeBodiesPerAddress: positiveInteger(env, 'MAX_LARGE_BODIES_PER_ADDRESS', Math.ceil(maxLargeBodiesInFlight / 4)),
    minBodyRate: positiveInteger(env, 'MIN_BODY_RATE', DEFAULT_MIN_BODY_RATE),
    trustProxy: trustProxy(env.TRUST_PROXY),
    requestTimeoutMs: positiveDurationMs(env, 'REQUEST_TIMEOUT', DEFAULT_REQUEST_TIMEOUT),
    secretRotationGraceMs: positiveDurationMs(env, 'SECRET_ROTATION_GRACE', '24h'),
    addressAllowlists: addressAllowlists(env, sources),
    addressAllowlistRefreshMs: positiveDurationMs(env, 'ADDRESS_ALLOWLIST_REFRESH', '1h'),
    metricsAddress: metricsAddressOf(env, 'RECEIVER_METRICS_ADDRESS', DEFAULT_RECEIVER_METRICS_ADDRESS),
    maxConnections: positiveInteger(env, 'MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS),
    acknowledge: oneOf(env, 'ACKNOWLEDGE', ['database', 'temporal'] as const, defaultAcknowledge(development)),
    sources,
    developmentSecrets,
    disabledSources,
    adminTokens: admins,
    viewerTokens: viewers,
    console: {
      enabled: oneOf(env, 'CONSOLE', ['on', 'off'] as const, 'on') === 'on' && admins.length + viewers.length > 0,
      sessionTtlMs: positiveDurationMs(env, 'CONSOLE_SESSION_TTL', '12h'),
    },
    alerts: alertConfig(env),
    codecToken: env.CODEC_TOKEN ? longToken('CODEC_TOKEN', env.CODEC_TOKEN) : undefined,
    apiTokens: apiTokens(env.API_TOKENS),
  };
}

function alertConfig(env: NodeJS.ProcessEnv): AlertConfig | undefined {
  const webhookUrl = httpUrl(env, 'ALERT_WEBHOOK_URL');
  const slackUrl = httpUrl(env, 'ALERT_SLACK_WEBHOOK_URL');
  if (!webhookUrl && !slackUrl) return undefined;
  const secret = env.ALERT_WEBHOOK_SECRET;
  if (webhookUrl && !secret?.startsWith('whsec_'))
    throw new ConfigError(
      'ALERT_WEBHOOK_URL is set, so ALERT_WEBHOOK_SECRET must be too: a Standard Webhooks secret (whsec_ and base64) the endpoint verifies alerts with.',
    );
  return {
    ...(webhookUrl && { webhook: { url: webhookUrl, secret: secret! } }),
    ...(slackUrl && { slackUrl }),
    intervalMs: positiveDurationMs(env, 'ALERT_INTERVAL', '30s'),
    groupThreshold: positiveInteger(env, 'ALERT_GROUP_THRESHOLD', 100),
    consoleUrl: httpUrl(env, 'CONSOLE_URL'),
  };
}

/** One source's allowlist: its provider's published list, where it is read from, and what happens outside it. */
export interface AddressAllowlist {
  source: string;
  mode: 'count' | 'enforce';
  url: string;
  read(list: unknown): string[];
}

/** `ADDRESS_ALLOWLISTS`: `<source>:count` or `<source>:enforce`, separated by spaces or commas, for sources whose kind publishes its addresses. */
function addressAllowlists(env: NodeJS.ProcessEnv, sources: readonly SourceConfig[]): AddressAllowlist[] {
  return splitList(env.ADDRESS_ALLOWLISTS).map((entry) => {
    const [name, mode, ...rest] = entry.split(':');
    const source = sources.find((candidate) => candidate.name === name);
    if (!source || (mode !== 'count' && mode !== 'enforce') || rest.length > 0) {
      throw new ConfigError(`ADDRESS_ALLOWLISTS: "${entry}" must be <source>:count or <source>:enforce, naming a configured source.`);
    }
    const published = providerOf(source.kind).publishedAddresses;
    if (!published) {
      const kinds = PROVIDERS.filter((provider) => provider.publishedAddresses).map((provider) => provider.kind);
      throw new ConfigError(`ADDRESS_ALLOWLISTS: ${source.kind} publishes no list of the addresses it sends from (only ${kinds.join(' and ')} do).`);
    }
    return { source: source.name, mode, url: httpUrl(env, published.urlEnv) ?? published.url, read: published.read };
  });
}

function httpUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  if (!value) return undefined;
  if (!/^https?:\/\/[^\s]+$/.test(value) || !URL.canParse(value)) throw new ConfigError(`${name} must be an absolute http(s) URL.`);
  return value;
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
  if (bad !== undefined)
    throw new ConfigError(`TRUST_PROXY lists "${bad.slice(0, 50)}"; give a number of hops, or addresses and subnets (10.0.0.0/8, loopback).`);
  return entries;
}

/** The receiver's `/metrics` has its own address, on loopback unless set: never the public webhook port. */
export const DEFAULT_RECEIVER_METRICS_ADDRESS = '127.0.0.1:9470';

/** What the receiver's body guards enforce (src/http/body-guards.ts), from its settings. */
export interface BodyLimits {
  maxBodyBytes: number;
  /** Bodies over `thresholdBytes` are received at most `maxInFlight` at a time, `maxPerAddress` from one client address. */
  largeBodies: { thresholdBytes: number; maxInFlight: number; maxPerAddress: number };
  /** After 5 s, at least `minRate` bytes a second, and fast enough to end within `timeoutMs`. */
  bodyPace: { minRate: number; timeoutMs: number };
}

export function bodyLimits(
  config: Pick<ReceiverConfig, 'maxBodyBytes' | 'largeBodyBytes' | 'maxLargeBodiesInFlight' | 'maxLargeBodiesPerAddress' | 'minBodyRate' | 'requestTimeoutMs'>,
): BodyLimits {
  return {
    maxBodyBytes: config.maxBodyBytes,
    largeBodies: { thresholdBytes: config.largeBodyBytes, maxInFlight: config.maxLargeBodiesInFlight, maxPerAddress: config.maxLargeBodiesPerAddress },
    bodyPace: { minRate: config.minBodyRate, timeoutMs: config.requestTimeoutMs },
  };
}
