import { readFileSync } from 'node:fs';
import { isMap, isScalar, LineCounter, parseDocument, type YAMLParseError } from 'yaml';
import { ConfigError } from '../core/errors';
import { fileOf, PREVIOUS, secretValue, withPrevious } from '../providers/secret-values';
import { readSize } from '../core/env';
import { Router, type Routes } from '../flows';
import { readHmacSpec } from '../providers/hmac';
import type { SourceConfig } from '../providers/source';
import { PROVIDERS } from '../providers/index';
import { INTERNAL_WORKFLOW_ID_PREFIX, isInternalWorkflowId, ProviderKind } from '../../contracts';

/** A development secret in use because its variable is unset; `npm run dev` prints these. */
export interface DevelopmentSecret {
  env: string;
  value: string;
}

/** Every provider kind but `hmac` has a built-in source, on when its variable is set (in development, always). */
const BUILT_IN_SOURCES = PROVIDERS.flatMap((provider) => (provider.builtIn ? [{ ...provider.builtIn, kind: provider.kind }] : []));

/**
 * Values used when a secret is unset in development only (`npm run dev`, `durable-webhooks send` and
 * the tests), so they work with no setup, from each kind's declaration. They are printed in the
 * banner and public in this repository: the production processes never use them, whatever NODE_ENV says.
 */
export const DEVELOPMENT_SECRETS: Readonly<Record<string, string>> = Object.fromEntries(
  BUILT_IN_SOURCES.map((source) => [source.secretEnv, source.developmentSecret]),
);

const SOURCE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** Keeps `prefix + event ID` and every idempotency key made from it inside Stripe's 255 characters. */
export const MAX_WORKFLOW_ID_PREFIX_LENGTH = 32;
const WORKFLOW_ID_PREFIX = new RegExp(`^[A-Za-z0-9_.:-]{0,${MAX_WORKFLOW_ID_PREFIX_LENGTH}}$`);
const PROVIDER_KINDS: readonly string[] = Object.values(ProviderKind);

/** The receiver's sources: the built-in ones whose secret is set (all of them in development), then WEBHOOKS_CONFIG's. */
export function loadSources(env: NodeJS.ProcessEnv, { development, port }: { development: boolean; port: number }) {
  const developmentSecrets: DevelopmentSecret[] = [];
  const disabledSources: Array<{ name: string; env: string }> = [];
  const sources: SourceConfig[] = [];

  for (const builtIn of BUILT_IN_SOURCES) {
    const secretFile = fileOf(env, builtIn.secretEnv);
    let keys = withPrevious(env, builtIn.secretEnv);
    const publicKeys = builtIn.publicKeyEnv ? withPrevious(env, builtIn.publicKeyEnv) : [];
    if (keys.length === 0 && publicKeys.length === 0) {
      if (!development) {
        disabledSources.push({ name: builtIn.name, env: builtIn.secretEnv });
        continue;
      }
      const value = builtIn.developmentSecret;
      developmentSecrets.push({ env: builtIn.secretEnv, value });
      keys = [value];
    }
    checkSecrets(builtIn.kind, keys, rotationHint(builtIn.secretEnv));
    if (builtIn.publicKeyEnv) checkSecrets(builtIn.kind, publicKeys, rotationHint(builtIn.publicKeyEnv));
    let url: string | undefined;
    if (builtIn.urlEnv) {
      url = secretValue(env, builtIn.urlEnv) || undefined;
      if (url === undefined) {
        if (!development)
          throw new ConfigError(`${builtIn.secretEnv} is set, so ${builtIn.urlEnv} must be too: ${builtIn.kind} signs the public URL it posts to.`);
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
      ...(secretFile && { secretFile: { env: builtIn.secretEnv, path: secretFile, publicKey: builtIn.keyIsPublic === true } }),
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

  return { sources, developmentSecrets, disabledSources };
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
 *       rate: 50/s                    # optional: at most this many workflow starts per second (or /m), cluster-wide
 *       maxBodyBytes: 2MiB            # optional: its largest body, over its kind's (docs/security.md)
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
    if (isInternalWorkflowId(prefix))
      throw new ConfigError(`${where} (${name}): "workflowIdPrefix" may not start with "${INTERNAL_WORKFLOW_ID_PREFIX}", the prefix of internal workflows.`);
    const apiKeyEnv = entry.apiKeyEnv;
    if (apiKeyEnv !== undefined && (kind !== ProviderKind.STRIPE || typeof apiKeyEnv !== 'string')) {
      throw new ConfigError(`${where} (${name}): "apiKeyEnv" names the variable with a Stripe source's API key.`);
    }
    const apiKey = typeof apiKeyEnv === 'string' ? env[apiKeyEnv] || undefined : undefined;
    const [url] = valueOrEnv(entry, 'url', env, where);
    if (url !== undefined) checkUrl(url, `${where} (${name}): "url"`);
    const hmac = kind === ProviderKind.HMAC ? readHmacSpec(entry, url, `${where} (${name})`) : undefined;
    if (kind !== ProviderKind.HMAC && ['signature', 'id', 'type', 'unsignedHeadersOk'].some((key) => key in entry)) {
      throw new ConfigError(
        `${where} (${name}): "signature", "id", "type" and "unsignedHeadersOk" are declared for hmac sources only; a ${kind} source reads them as its provider documents.`,
      );
    }
    const routesNode = parsed.getIn(['sources', index, 'routes'], true) as { range?: [number, number, number] } | undefined;
    const routesLine = routesNode?.range ? ` line ${lineCounter.linePos(routesNode.range[0]).line}` : '';
    const routes = readRoutes(entry.routes, kind as ProviderKind, `WEBHOOKS_CONFIG (${file})${routesLine}: source "${name}" routes`);
    const rate = entry.rate === undefined ? undefined : readRate(entry.rate, `${where} (${name}): "rate"`);
    const maxBodyBytes = entry.maxBodyBytes === undefined ? undefined : readSize(entry.maxBodyBytes, `${where} (${name}): "maxBodyBytes"`);
    return {
      name,
      kind: kind as ProviderKind,
      secrets,
      publicKeys,
      workflowIdPrefix: prefix,
      ...(apiKey && { apiKey }),
      ...(url && { url }),
      ...(hmac && { hmac }),
      ...(routes && { routes }),
      ...(rate !== undefined && { rate }),
      ...(maxBodyBytes !== undefined && { maxBodyBytes }),
    };
  });
}

/**
 * `routes: { "invoice.paid": notifyFinance, "customer.*": recordEvent, "orders/paid": [fulfilShopifyOrder, { flow: notifyOps, if: "…" }] }`,
 * each flow checked to exist and each filter compiled.
 */
function readRoutes(value: unknown, kind: ProviderKind, where: string): Routes | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every(isRouteValue)) {
    throw new ConfigError(
      `${where}: must map event types to a flow's name, such as { "invoice.paid": recordEvent }, or to subscribers: { flow, if } or a list of names and { flow, if } (docs/flows.md#routes).`,
    );
  }
  return new Router(kind, value as Routes, where).routes;
}

function isRouteValue(value: unknown): boolean {
  const isSubscription = (item: unknown) =>
    typeof item === 'string' ||
    (typeof item === 'object' &&
      item !== null &&
      !Array.isArray(item) &&
      Object.keys(item).every((key) => key === 'flow' || key === 'if') &&
      typeof (item as { flow?: unknown }).flow === 'string' &&
      ['string', 'undefined'].includes(typeof (item as { if?: unknown }).if));
  return Array.isArray(value) ? value.every(isSubscription) : isSubscription(value);
}

/**
 * A rate of workflow starts, per second: `50/s`, `600/m`, or a bare number (per second).
 * @throws ConfigError naming `what`, for anything else or a rate that is not positive.
 */
export function readRate(value: unknown, what: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*([sm]))?\s*$/.exec(String(value));
  const rate = match ? Number(match[1]) / (match[2] === 'm' ? 60 : 1) : NaN;
  if (!(rate > 0) || (typeof value !== 'string' && typeof value !== 'number'))
    throw new ConfigError(`${what} must be a positive rate of starts, such as 50/s or 600/m.`);
  return rate;
}

/** Every setting a source may have; anything else is a misspelling or a feature this version lacks. */
const SOURCE_KEYS = [
  'name',
  'kind',
  'secret',
  'secretEnv',
  'publicKey',
  'publicKeyEnv',
  'workflowIdPrefix',
  'apiKeyEnv',
  'url',
  'urlEnv',
  'signature',
  'id',
  'type',
  'unsignedHeadersOk',
  'routes',
  'rate',
  'maxBodyBytes',
];

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
  return [...inline, ...envNames.map((name) => secretValue(env, name) ?? '')].filter(Boolean);
}

function stringList(value: unknown, message: string): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => typeof item === 'string')) throw new ConfigError(message);
  return list as string[];
}
