import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { isMap, isScalar, LineCounter, parseDocument, type YAMLParseError } from 'yaml';
import type { FlowSettings } from '../contracts';
import { ConfigError } from './errors';
import { Router, type Routes } from './flows';
import { readHmacSpec, type HmacSpec } from './providers/hmac';
import { SENDGRID_DEVELOPMENT_KEYS } from './providers/sendgrid';
import { INTERNAL_WORKFLOW_ID_PREFIX, isInternalWorkflowId, ProviderKind } from '../contracts';

/** One webhook source: `POST /webhooks/<name>`, verified as its provider kind. */
export interface SourceConfig {
  name: string;
  kind: ProviderKind;
  /** Signing secrets, each taken whole; every one is accepted, the first signs (rotation). */
  secrets: string[];
  /** Standard Webhooks `whpk_` ed25519 public keys for `v1a` signatures. */
  publicKeys: string[];
  /** Put before the event ID to make the workflow ID; empty for the built-in sources. */
  workflowIdPrefix: string;
  /** A Stripe source's own API key (from its `apiKeyEnv`), for `backfill stripe --source`. */
  apiKey?: string;
  /** The public URL a URL-signing provider (Square, Twilio, an `hmac` source signing `{url}`) posts to and signs. */
  url?: string;
  /** How an `hmac` source signs, and where its event ID and type are. */
  hmac?: HmacSpec;
  /** Its event types (or `prefix*`) to flows, over the kind's defaults. */
  routes?: Routes;
}

/** A development secret in use because its variable is unset; `npm run dev` prints these. */
export interface DevelopmentSecret {
  env: string;
  value: string;
}

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
  /** Largest accepted body; every body goes to the body store, none to Temporal. @default 25 MiB */
  maxBodyBytes: number;
  /** Bodies over this many bytes count against `maxLargeBodiesInFlight`. @default 128 KiB */
  largeBodyBytes: number;
  /** Large bodies received at once; one more is answered 503 with Retry-After, unread. @default 8 */
  maxLargeBodiesInFlight: number;
  /** A request's headers and body must arrive within this, or the connection is closed (slow clients). @default 30 s */
  requestTimeoutMs: number;
  /** Open connections beyond this are closed as they arrive. @default 1000 */
  maxConnections: number;
  sources: SourceConfig[];
  developmentSecrets: DevelopmentSecret[];
  /** Built-in sources left off because their secret is unset (always, outside development). */
  disabledSources: Array<{ name: string; env: string }>;
  /** Bearer token for `/admin`; the admin API is off without it. */
  adminToken: string | undefined;
  /** Bearer tokens for `/v1`, each with its named scope; the API is off without any. */
  apiTokens: ApiToken[];
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

/** Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later: eight attempts over about 28 hours. */
export const DEFAULT_DELIVERY_SCHEDULE = '0s 5s 5m 30m 2h 5h 10h 10h';

/** GitHub's largest payload is 25 MB; every body goes to the body store, and Temporal gets only a few fields. */
export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024;
export const DEFAULT_LARGE_BODY_BYTES = 128 * 1024;
/** About 8 × 25 MiB of bodies being read, parsed and stored at once: see "Data and privacy" in the README for the measured peak. */
export const DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT = 8;

/**
 * Values used when a secret is unset in development only (`npm run dev`, `durable-webhooks send` and
 * the tests), so they work with no setup. They are printed in the banner and public in this
 * repository: the production processes never use them, whatever NODE_ENV says.
 */
export const DEVELOPMENT_SECRETS = {
  STRIPE_WEBHOOK_SECRET: 'whsec_durable_webhooks_development_only',
  GITHUB_WEBHOOK_SECRET: 'durable-webhooks-development-only',
  STANDARD_WEBHOOK_SECRET: 'whsec_ZHVyYWJsZS13ZWJob29rcyBkZXZlbG9wbWVudCBrZXk=',
  SVIX_WEBHOOK_SECRET: 'whsec_ZHVyYWJsZS13ZWJob29rcyBzdml4IGRldmVsb3BtZW50',
  SHOPIFY_WEBHOOK_SECRET: 'shopify-durable-webhooks-development-only',
  PADDLE_WEBHOOK_SECRET: 'pdl_ntfset_durable_webhooks_development_only',
  SQUARE_WEBHOOK_SIGNATURE_KEY: 'square-durable-webhooks-development-only',
  SLACK_SIGNING_SECRET: 'slack-durable-webhooks-development-only',
  LINEAR_WEBHOOK_SECRET: 'lin_wh_durable_webhooks_development_only',
  TWILIO_AUTH_TOKEN: 'twilio-durable-webhooks-development-only',
  SENDGRID_WEBHOOK_PUBLIC_KEY: SENDGRID_DEVELOPMENT_KEYS.publicKey,
  ADYEN_HMAC_KEY: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
} as const;

interface BuiltInSource {
  name: string;
  kind: ProviderKind;
  /** The variable whose value turns the source on: its secret, or (`keyIsPublic`) its verification key. */
  secretEnv: keyof typeof DEVELOPMENT_SECRETS;
  keyIsPublic?: boolean;
  publicKeyEnv?: string;
  /** The variable with the public URL the provider signs. */
  urlEnv?: string;
}

/** Every provider kind but `hmac` has a built-in source, on when its variable is set (in development, always). */
const BUILT_IN_SOURCES: readonly BuiltInSource[] = [
  { name: 'stripe', kind: ProviderKind.STRIPE, secretEnv: 'STRIPE_WEBHOOK_SECRET' },
  { name: 'github', kind: ProviderKind.GITHUB, secretEnv: 'GITHUB_WEBHOOK_SECRET' },
  { name: 'standard', kind: ProviderKind.STANDARD_WEBHOOKS, secretEnv: 'STANDARD_WEBHOOK_SECRET', publicKeyEnv: 'STANDARD_WEBHOOK_PUBLIC_KEY' },
  { name: 'svix', kind: ProviderKind.SVIX, secretEnv: 'SVIX_WEBHOOK_SECRET' },
  { name: 'shopify', kind: ProviderKind.SHOPIFY, secretEnv: 'SHOPIFY_WEBHOOK_SECRET' },
  { name: 'paddle', kind: ProviderKind.PADDLE, secretEnv: 'PADDLE_WEBHOOK_SECRET' },
  { name: 'square', kind: ProviderKind.SQUARE, secretEnv: 'SQUARE_WEBHOOK_SIGNATURE_KEY', urlEnv: 'SQUARE_WEBHOOK_URL' },
  { name: 'slack', kind: ProviderKind.SLACK, secretEnv: 'SLACK_SIGNING_SECRET' },
  { name: 'linear', kind: ProviderKind.LINEAR, secretEnv: 'LINEAR_WEBHOOK_SECRET' },
  { name: 'twilio', kind: ProviderKind.TWILIO, secretEnv: 'TWILIO_AUTH_TOKEN', urlEnv: 'TWILIO_WEBHOOK_URL' },
  { name: 'sendgrid', kind: ProviderKind.SENDGRID, secretEnv: 'SENDGRID_WEBHOOK_PUBLIC_KEY', keyIsPublic: true },
  { name: 'adyen', kind: ProviderKind.ADYEN, secretEnv: 'ADYEN_HMAC_KEY' },
];

const SOURCE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** Keeps `prefix + event ID` and every idempotency key made from it inside Stripe's 255 characters. */
export const MAX_WORKFLOW_ID_PREFIX_LENGTH = 32;
const WORKFLOW_ID_PREFIX = new RegExp(`^[A-Za-z0-9_.:-]{0,${MAX_WORKFLOW_ID_PREFIX_LENGTH}}$`);
const PROVIDER_KINDS: readonly string[] = Object.values(ProviderKind);

export const PROJECT_ROOT = path.resolve(__dirname, path.basename(path.dirname(__dirname)) === 'dist' ? '../..' : '..');

export interface LoadOptions {
  /**
   * Fill unset secrets with the public development values, and allow development-only settings.
   * Only `npm run dev`, `durable-webhooks send` and tests pass it.
   * @default false
   */
  development?: boolean;
}

/** Reads and validates what every process needs; throws `ConfigError` naming the bad setting. */
export function loadCommonConfig(env: NodeJS.ProcessEnv = process.env): CommonConfig {
  return {
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'webhooks',
    dataDir: path.resolve(env.DATA_DIR || path.join(PROJECT_ROOT, '.data')),
    databaseUrl: env.DATABASE_URL || undefined,
    temporalUiUrl: (env.TEMPORAL_UI_URL || devServerUiUrl(env.TEMPORAL_ADDRESS)).replace(/\/$/, ''),
    allowPrivateEndpoints: flag(env, 'ALLOW_PRIVATE_ENDPOINTS'),
    deliveryScheduleMs: splitList(env.DELIVERY_SCHEDULE || DEFAULT_DELIVERY_SCHEDULE).map((step) => durationMs(step, 'DELIVERY_SCHEDULE')),
    stripe: { secretKey: env.STRIPE_SECRET_KEY || undefined, apiUrl: env.STRIPE_API_URL || undefined },
    github: { token: env.GITHUB_TOKEN || undefined, apiUrl: env.GITHUB_API_URL || undefined, hooks: hookPaths(env.GITHUB_HOOKS) },
    paddle: { apiKey: env.PADDLE_API_KEY || undefined, apiUrl: env.PADDLE_API_URL || undefined },
    square: { token: env.SQUARE_ACCESS_TOKEN || undefined, apiUrl: env.SQUARE_API_URL || undefined },
  };
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
  const developmentSecrets: DevelopmentSecret[] = [];
  const disabledSources: ReceiverConfig['disabledSources'] = [];
  const sources: SourceConfig[] = [];

  const port = portNumber(env, 'PORT', 3000);
  for (const builtIn of BUILT_IN_SOURCES) {
    let keys = withPrevious(env, builtIn.secretEnv);
    const publicKeys = builtIn.publicKeyEnv ? withPrevious(env, builtIn.publicKeyEnv) : [];
    if (keys.length === 0 && publicKeys.length === 0) {
      if (!development) {
        disabledSources.push({ name: builtIn.name, env: builtIn.secretEnv });
        continue;
      }
      const value = DEVELOPMENT_SECRETS[builtIn.secretEnv];
      developmentSecrets.push({ env: builtIn.secretEnv, value });
      keys = [value];
    }
    checkSecrets(builtIn.kind, keys, rotationHint(builtIn.secretEnv));
    if (builtIn.publicKeyEnv) checkSecrets(builtIn.kind, publicKeys, rotationHint(builtIn.publicKeyEnv));
    let url: string | undefined;
    if (builtIn.urlEnv) {
      url = env[builtIn.urlEnv] || undefined;
      if (url === undefined) {
        if (!development) throw new ConfigError(`${builtIn.secretEnv} is set, so ${builtIn.urlEnv} must be too: ${builtIn.kind} signs the public URL it posts to.`);
        url = `http://localhost:${port}/webhooks/${builtIn.name}`;
        developmentSecrets.push({ env: builtIn.urlEnv, value: url });
      }
      checkUrl(url, builtIn.urlEnv);
    }
    sources.push({
      name: builtIn.name,
      kind: builtIn.kind,
      secrets: builtIn.keyIsPublic ? [] : keys,
      publicKeys: builtIn.keyIsPublic ? keys : publicKeys,
      workflowIdPrefix: '',
      ...(url && { url }),
    });
  }

  if (env.WEBHOOKS_CONFIG) {
    for (const source of readSourcesFile(env.WEBHOOKS_CONFIG, env)) {
      if (sources.some((existing) => existing.name === source.name) || disabledSources.some((disabled) => disabled.name === source.name)) {
        throw new ConfigError(`WEBHOOKS_CONFIG: a source named "${source.name}" already exists.`);
      }
      sources.push(source);
    }
  }

  return {
    ...loadCommonConfig(env),
    port,
    maxBodyBytes: positiveInteger(env, 'MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES),
    largeBodyBytes: positiveInteger(env, 'LARGE_BODY_BYTES', DEFAULT_LARGE_BODY_BYTES),
    maxLargeBodiesInFlight: positiveInteger(env, 'MAX_LARGE_BODIES_IN_FLIGHT', DEFAULT_MAX_LARGE_BODIES_IN_FLIGHT),
    requestTimeoutMs: positiveDurationMs(env, 'REQUEST_TIMEOUT', DEFAULT_REQUEST_TIMEOUT),
    maxConnections: positiveInteger(env, 'MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS),
    sources,
    developmentSecrets,
    disabledSources,
    adminToken: env.ADMIN_TOKEN || undefined,
    apiTokens: apiTokens(env.API_TOKENS),
  };
}

/** The dev server serves its UI on the gRPC port + 1000 (7233 → 8233). */
function devServerUiUrl(address: string | undefined): string {
  const port = /^(?:127\.0\.0\.1|localhost):(\d+)$/.exec(address ?? '')?.[1];
  return `http://localhost:${port ? Number(port) + 1000 : 8233}`;
}

/** A list of values that never contain spaces or commas (durations, tokens), separated by either. */
export function splitList(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter(Boolean);
}

/** The suffix of the variable that holds the secret being rotated out: `GITHUB_WEBHOOK_SECRET_PREVIOUS`. */
export const PREVIOUS = '_PREVIOUS';

/**
 * A secret variable and its `_PREVIOUS` companion, each value taken whole: a secret may contain
 * spaces and commas (GitHub's may), and no piece of one may ever verify a signature on its own.
 */
function withPrevious(env: NodeJS.ProcessEnv, name: string): string[] {
  return [env[name], env[name + PREVIOUS]].filter((value): value is string => Boolean(value));
}

/**
 * Stripe's and Standard Webhooks' secrets (`whsec_`) and public keys (`whpk_`) never contain a space
 * or a comma, so one that does is a list in the old format, which would otherwise be refused on
 * every delivery as a signature mismatch.
 */
const rotationHint = (name: string) => `${name} holds one value; during a rotation, put the previous one in ${name}${PREVIOUS}.`;

function checkSecrets(kind: ProviderKind, values: readonly string[], hint: string): void {
  if (kind !== ProviderKind.GITHUB && kind !== ProviderKind.HMAC && values.some((value) => /[\s,]/.test(value))) throw new ConfigError(hint);
}

/** An absolute http(s) URL, as the provider has it registered. */
function checkUrl(url: string, what: string): void {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'https:' && parsed?.protocol !== 'http:') {
    throw new ConfigError(`${what} must be the absolute http(s) URL the provider posts to and signs, exactly as registered with it.`);
  }
}

const SCOPE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `API_TOKENS="shop:tok_… billing:tok_…"`: `<scope>:<token>` entries separated by spaces or commas. */
function apiTokens(value: string | undefined): ApiToken[] {
  const tokens = splitList(value).map((entry) => {
    const colon = entry.indexOf(':');
    const scope = entry.slice(0, colon);
    const token = entry.slice(colon + 1);
    if (colon === -1 || !SCOPE_NAME.test(scope) || token === '') {
      throw new ConfigError('API_TOKENS must list <scope>:<token> entries (for example "shop:tok_…"); a scope is lower-case letters, digits, "-" or "_".');
    }
    return { scope, token };
  });
  if (new Set(tokens.map(({ token }) => token)).size !== tokens.length) throw new ConfigError('API_TOKENS lists the same token twice.');
  return tokens;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false, not "${env[name]}".`);
}

function durationMs(value: string, name: string): number {
  let ms: number;
  try {
    ms = msToNumber(value as Duration);
  } catch {
    ms = Number.NaN;
  }
  if (!Number.isFinite(ms) || ms < 0) throw new ConfigError(`${name} must list durations such as 0s 5s 5m 2h, not "${value}".`);
  return ms;
}

function positiveDurationMs(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const raw = env[name] || fallback;
  let ms: number;
  try {
    ms = msToNumber(raw as Duration);
  } catch {
    ms = Number.NaN;
  }
  if (!(ms > 0)) throw new ConfigError(`${name} must be a positive duration such as 30s, not "${raw}".`);
  return ms;
}

/** 0 asks the system for a free port. */
function portNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 65535) throw new ConfigError(`${name} must be a port number (0-65535), not "${raw}".`);
  return value;
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new ConfigError(`${name} must be a positive integer, not "${raw}".`);
  return value;
}

/**
 * The WEBHOOKS_CONFIG file (YAML or JSON):
 *
 *   sources:
 *     - name: stripe-connect          # POST /webhooks/stripe-connect
 *       kind: stripe                  # any provider kind (README: Providers)
 *       secretEnv: STRIPE_CONNECT_WEBHOOK_SECRET   # or `secret:` inline; either may be a list (rotation)
 *       workflowIdPrefix: "connect-"  # optional
 *       apiKeyEnv: STRIPE_CONNECT_SECRET_KEY       # optional, stripe only: its API key, for backfill
 *       publicKeyEnv: ...             # standard-webhooks and sendgrid, or `publicKey:`
 *       urlEnv: ...                   # square, twilio and hmac signing {url}: the public URL, or `url:`
 *       signature: {...}, id: {...}, type: {...}   # hmac only (src/providers/hmac.ts)
 *       routes: { "invoice.paid": notifyFinance, "customer.*": recordEvent }   # optional, over the kind's defaults
 *
 * Each secret is one whole string: a list is a YAML list, never a string split on spaces.
 */
function readSourcesFile(file: string, env: NodeJS.ProcessEnv): SourceConfig[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`WEBHOOKS_CONFIG (${file}) cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}.`);
  }
  const lineCounter = new LineCounter();
  const parsed = parseDocument(text, { lineCounter });
  const [syntaxError] = parsed.errors as YAMLParseError[];
  if (syntaxError) {
    // The parser's message quotes the offending line, which may hold an inline secret: say where, not what.
    const { code, linePos } = syntaxError;
    const at = linePos ? ` at line ${linePos[0].line}, column ${linePos[0].col}` : '';
    throw new ConfigError(`WEBHOOKS_CONFIG (${file}) is not valid YAML or JSON${at}${code ? ` (${code})` : ''}.`);
  }
  refuseUnknownKeys(parsed, lineCounter, file);
  const entries = (parsed.toJS() as { sources?: unknown } | null)?.sources;
  if (!Array.isArray(entries)) throw new ConfigError(`WEBHOOKS_CONFIG (${file}) must have a "sources" list.`);
  return entries.map((entry: Record<string, unknown>, index) => {
    const where = `WEBHOOKS_CONFIG sources[${index}]`;
    const name = String(entry?.name ?? '');
    if (!SOURCE_NAME.test(name)) throw new ConfigError(`${where}: "name" must be lower-case letters, digits, "-" or "_".`);
    const kind = String(entry.kind ?? '');
    if (!PROVIDER_KINDS.includes(kind)) throw new ConfigError(`${where} (${name}): "kind" must be one of ${PROVIDER_KINDS.join(', ')}.`);
    const secrets = valueOrEnv(entry, 'secret', env, where);
    const publicKeys = valueOrEnv(entry, 'publicKey', env, where);
    if (secrets.length === 0 && publicKeys.length === 0) {
      throw new ConfigError(`${where} (${name}): set "secret" or "secretEnv" (an unset variable counts as missing).`);
    }
    checkSecrets(kind as ProviderKind, [...secrets, ...publicKeys], `${where} (${name}): each secret is one value; list several as a YAML list.`);
    const prefix = entry.workflowIdPrefix ?? '';
    if (typeof prefix !== 'string' || !WORKFLOW_ID_PREFIX.test(prefix)) {
      throw new ConfigError(`${where} (${name}): "workflowIdPrefix" must be up to ${MAX_WORKFLOW_ID_PREFIX_LENGTH} letters, digits, "-", "_", "." or ":".`);
    }
    if (isInternalWorkflowId(prefix)) throw new ConfigError(`${where} (${name}): "workflowIdPrefix" may not start with "${INTERNAL_WORKFLOW_ID_PREFIX}", the prefix of internal workflows.`);
    const apiKeyEnv = entry.apiKeyEnv;
    if (apiKeyEnv !== undefined && (kind !== ProviderKind.STRIPE || typeof apiKeyEnv !== 'string')) {
      throw new ConfigError(`${where} (${name}): "apiKeyEnv" names the variable with a Stripe source's API key.`);
    }
    const apiKey = typeof apiKeyEnv === 'string' ? env[apiKeyEnv] || undefined : undefined;
    const [url] = valueOrEnv(entry, 'url', env, where);
    if (url !== undefined) checkUrl(url, `${where} (${name}): "url"`);
    const hmac = kind === ProviderKind.HMAC ? readHmacSpec(entry, url, `${where} (${name})`) : undefined;
    if (kind !== ProviderKind.HMAC && ['signature', 'id', 'type'].some((key) => key in entry)) {
      throw new ConfigError(`${where} (${name}): "signature", "id" and "type" are declared for hmac sources only; a ${kind} source reads them as its provider documents.`);
    }
    const routesNode = parsed.getIn(['sources', index, 'routes'], true) as { range?: [number, number, number] } | undefined;
    const routesLine = routesNode?.range ? ` line ${lineCounter.linePos(routesNode.range[0]).line}` : '';
    const routes = readRoutes(entry.routes, kind as ProviderKind, `WEBHOOKS_CONFIG (${file})${routesLine}: source "${name}" routes`);
    return { name, kind: kind as ProviderKind, secrets, publicKeys, workflowIdPrefix: prefix, ...(apiKey && { apiKey }), ...(url && { url }), ...(hmac && { hmac }), ...(routes && { routes }) };
  });
}

/** `routes: { "invoice.paid": notifyFinance, "customer.*": recordEvent }`, each flow checked to exist. */
function readRoutes(value: unknown, kind: ProviderKind, where: string): Routes | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((flow) => typeof flow === 'string')) {
    throw new ConfigError(`${where}: must map event types to flow names, such as { "invoice.paid": recordEvent }.`);
  }
  return new Router(kind, value as Routes, where).routes;
}

/** Every setting a source may have; anything else is a misspelling or a feature this version lacks. */
const SOURCE_KEYS = ['name', 'kind', 'secret', 'secretEnv', 'publicKey', 'publicKeyEnv', 'workflowIdPrefix', 'apiKeyEnv', 'url', 'urlEnv', 'signature', 'id', 'type', 'routes'];

/**
 * Stops on a key WEBHOOKS_CONFIG does not know, naming it and its line: a misspelt `secretEnv`
 * silently ignored would leave a source refusing every delivery, or accepting with no secret at all.
 */
function refuseUnknownKeys(document: ReturnType<typeof parseDocument>, lines: LineCounter, file: string): void {
  const at = (node: { range?: [number, number, number] | null }) => (node.range ? ` line ${lines.linePos(node.range[0]).line}` : '');
  const check = (map: unknown, known: readonly string[], what: string) => {
    if (!isMap(map)) return;
    for (const { key } of map.items) {
      const name = isScalar(key) ? String(key.value) : String(key);
      if (!known.includes(name)) {
        throw new ConfigError(`WEBHOOKS_CONFIG (${file})${isScalar(key) ? at(key) : ''}: "${name}" is not a setting of ${what}; use ${known.join(', ')}.`);
      }
    }
  };
  check(document.contents, ['sources'], 'the file');
  const sources = document.get('sources', true) as { items?: unknown[] } | undefined;
  for (const source of sources?.items ?? []) check(source, SOURCE_KEYS, 'a source');
}

/** `secret: x` or `secret: [x, y]`, then `secretEnv: NAME` or `secretEnv: [NAME, OTHER]`; every value whole. */
function valueOrEnv(entry: Record<string, unknown>, key: string, env: NodeJS.ProcessEnv, where: string): string[] {
  const inline = stringList(entry[key], `${where}: "${key}" must be a string or a list of strings.`);
  const envNames = stringList(entry[`${key}Env`], `${where}: "${key}Env" must name a variable, or list several.`);
  return [...inline, ...envNames.map((name) => env[name] ?? '')].filter(Boolean);
}

function stringList(value: unknown, message: string): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => typeof item === 'string')) throw new ConfigError(message);
  return list as string[];
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
}

export const DEFAULT_WORKER_METRICS_ADDRESS = '127.0.0.1:9464';

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
  try {
    if (msToNumber(reviewTimeout as Duration) <= 0) throw new Error('not positive');
  } catch {
    throw new ConfigError(`REVIEW_TIMEOUT must be a duration such as 30m, 24h or 3d, not "${reviewTimeout}".`);
  }

  const metricsAddress = env.WORKER_METRICS_ADDRESS ?? DEFAULT_WORKER_METRICS_ADDRESS;
  if (metricsAddress !== '' && !/^[\w.-]+:\d{1,5}$|^\[[\da-fA-F:]+\]:\d{1,5}$/.test(metricsAddress)) {
    throw new ConfigError(`WORKER_METRICS_ADDRESS must be host:port (or empty to turn metrics off), not "${metricsAddress}".`);
  }

  return {
    ...loadCommonConfig(env),
    email,
    metricsAddress: metricsAddress || undefined,
    settings: {
      reviewThreshold: env.REVIEW_THRESHOLD ? positiveInteger(env, 'REVIEW_THRESHOLD', 0) : null,
      reviewTimeout: reviewTimeout as Duration,
      paymentRetryWindowMs: positiveDurationMs(env, 'PAYMENT_RETRY_WINDOW', '7d'),
      notifyEmail: env.NOTIFY_EMAIL || null,
    },
  };
}
