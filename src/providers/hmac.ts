import { createHmac, randomUUID } from 'node:crypto';
import { ConfigError } from '../core/errors';
import { SignatureVerificationError } from '../core/delivery-errors';
import { checkTolerance, requiredHeader } from './headers';
import { isoTime, objectId, parseJsonObject, requireString } from './json';
import { firstSecret, safeEqual } from './secrets';
import { ProviderKind, readPointer } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent } from './types';
import { MIB } from './limits';
import { defineProvider } from './define';
import type { FieldSource, HmacSpec } from './source';

/**
 * A sender that signs an HMAC of the body (and perhaps a timestamp and its URL) with a shared
 * secret, as declared in WEBHOOKS_CONFIG: enough for Intercom and others of that shape, with no code.
 */
export function createHmacAdapter(options: { source: string; secrets: readonly string[]; spec: HmacSpec }): ProviderAdapter {
  const { source, secrets, spec } = options;
  const headerNames = [spec.header, spec.timestampHeader, ...[spec.id, spec.type].map((field) => ('header' in field ? field.header : undefined))];
  const signature = (secret: string, timestamp: string, body: Buffer) => {
    const hmac = createHmac(spec.algorithm, secret);
    // The template is split around {body} so the raw bytes are signed as they came.
    for (const part of spec.signed.split(/(\{body\})/)) {
      hmac.update(part === '{body}' ? body : part.replaceAll('{timestamp}', timestamp).replaceAll('{url}', spec.url ?? ''));
    }
    return spec.prefix + hmac.digest(spec.encoding);
  };

  return adapter({
    kind: ProviderKind.HMAC,
    fields: { id: describe(spec.id), type: describe(spec.type), unsigned: (['id', 'type'] as const).filter((field) => 'header' in spec[field]) },
    contentTypes: ['application/json'],
    signatureHeaders: [...new Set(headerNames.filter((name): name is string => name !== undefined))],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const offered = requiredHeader(headers, spec.header, source);
      let timestamp = '';
      if (spec.timestampHeader) {
        timestamp = requiredHeader(headers, spec.timestampHeader, source);
        if (!/^\d+$/.test(timestamp))
          throw new SignatureVerificationError(`${spec.timestampHeader} must be whole seconds since the epoch.`, { source: source });
        checkTolerance(Number(timestamp), receivedAt, spec.toleranceSeconds, spec.timestampHeader, source);
      }
      if (!secrets.some((secret) => safeEqual(offered, signature(secret, timestamp, rawBody)))) {
        throw new SignatureVerificationError(`${spec.header} does not match the body with any configured secret.`, { source: source });
      }
      return {};
    },

    read({ rawBody, headers, receivedAt }: Delivery) {
      // Checked: a whole number when the spec signs a timestamp.
      const timestamp = spec.timestampHeader ? requiredHeader(headers, spec.timestampHeader, source) : '';
      const payload = parseJsonObject(rawBody.toString('utf8'), source);
      const read = (field: FieldSource, what: string) =>
        requireString('header' in field ? headers[field.header] : stringOf(readPointer(payload, field.pointer)), `${what} (${describe(field)})`, source);
      return {
        events: [
          {
            id: read(spec.id, 'event ID'),
            type: read(spec.type, 'event type'),
            occurredAt: isoTime(timestamp === '' ? undefined : Number(timestamp) * 1000, receivedAt),
            subject: objectId(payload.data),
            payload,
          },
        ],
      };
    },

    sampleId: () => randomUUID(),

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const document: Record<string, unknown> = { data: payload };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const [field, value] of [
        [spec.id, id],
        [spec.type, type],
      ] as const) {
        if ('header' in field) headers[field.header] = value;
        else setPointer(document, field.pointer, value);
      }
      const seconds = String(Math.floor(timestamp.getTime() / 1000));
      if (spec.timestampHeader) headers[spec.timestampHeader] = seconds;
      const body = JSON.stringify(document);
      headers[spec.header] = signature(firstSecret(secrets, source), seconds, Buffer.from(body));
      return { headers, body };
    },
  });
}

function describe(field: FieldSource): string {
  return 'header' in field ? `${field.header} header` : `body ${field.pointer}`;
}

function stringOf(value: unknown): unknown {
  return typeof value === 'number' ? String(value) : value;
}

/** Writes a value at a JSON pointer of a sample document, creating the objects on the way. */
function setPointer(document: Record<string, unknown>, pointer: string, value: string): void {
  const keys = pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  let target = document;
  for (const key of keys.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
  target[keys.at(-1)!] = value;
}

const ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
const ENCODINGS = ['hex', 'base64'] as const;
const SIGNATURE_KEYS = new Set(['header', 'algorithm', 'encoding', 'prefix', 'signed', 'timestampHeader', 'toleranceSeconds']);

/**
 * An hmac source's declaration in WEBHOOKS_CONFIG, checked whole: a misspelt key or a template that
 * could never verify stops the receiver with one line instead of refusing every delivery.
 *
 *   signature: { header: X-Hub-Signature, algorithm: sha1, encoding: hex, prefix: "sha1=", signed: "{body}" }
 *   id: { pointer: /id }          # or { header: X-Request-Id }
 *   type: { pointer: /topic }
 */
export function readHmacSpec(entry: Record<string, unknown>, url: string | undefined, where: string): HmacSpec {
  const signature = entry.signature as Record<string, unknown> | undefined;
  if (typeof signature !== 'object' || signature === null)
    throw new ConfigError(`${where}: an hmac source declares "signature" (header, algorithm, encoding, prefix, signed).`);
  const unknown = Object.keys(signature).find((key) => !SIGNATURE_KEYS.has(key));
  if (unknown !== undefined) throw new ConfigError(`${where}: "signature.${unknown}" is not a setting; use ${[...SIGNATURE_KEYS].join(', ')}.`);
  const text = (key: string, fallback?: string) => {
    const value = signature[key] ?? fallback;
    if (typeof value !== 'string') throw new ConfigError(`${where}: "signature.${key}" must be text.`);
    return value;
  };
  const header = text('header').toLowerCase();
  const algorithm = text('algorithm', 'sha256');
  if (!(ALGORITHMS as readonly string[]).includes(algorithm)) throw new ConfigError(`${where}: "signature.algorithm" is one of ${ALGORITHMS.join(', ')}.`);
  const encoding = text('encoding', 'hex');
  if (!(ENCODINGS as readonly string[]).includes(encoding)) throw new ConfigError(`${where}: "signature.encoding" is one of ${ENCODINGS.join(', ')}.`);
  const signed = text('signed', '{body}');
  if (signed.split('{body}').length !== 2)
    throw new ConfigError(`${where}: "signature.signed" must hold {body} once, such as "{body}", "{timestamp}.{body}" or "{url}{body}".`);
  const timestampHeader = signature.timestampHeader === undefined ? undefined : text('timestampHeader').toLowerCase();
  if (signed.includes('{timestamp}') !== (timestampHeader !== undefined)) {
    throw new ConfigError(`${where}: "signature.signed" has {timestamp} exactly when "signature.timestampHeader" names the header it comes from.`);
  }
  if (signed.includes('{url}') && url === undefined)
    throw new ConfigError(`${where}: "signature.signed" has {url}, so set "url" or "urlEnv" to the public URL the sender signs.`);
  const toleranceSeconds = signature.toleranceSeconds ?? 300;
  if (typeof toleranceSeconds !== 'number' || !Number.isInteger(toleranceSeconds) || toleranceSeconds <= 0) {
    throw new ConfigError(`${where}: "signature.toleranceSeconds" must be a positive whole number.`);
  }
  return {
    header,
    algorithm: algorithm as HmacSpec['algorithm'],
    encoding: encoding as HmacSpec['encoding'],
    prefix: text('prefix', ''),
    signed,
    ...(timestampHeader !== undefined && { timestampHeader }),
    toleranceSeconds,
    ...(url !== undefined && { url }),
    ...identity(entry, where),
  };
}

/**
 * Where the event ID and type are. A header is outside the signed bytes: anyone holding one signed
 * delivery could send it again under new IDs, or as another type, so a header is refused unless the
 * source says `unsignedHeadersOk: true` (the receiver then finds such replays by the body's hash).
 */
function identity(entry: Record<string, unknown>, where: string): Pick<HmacSpec, 'id' | 'type'> {
  const id = fieldSource(entry.id, 'id', where);
  const type = fieldSource(entry.type, 'type', where);
  if (entry.unsignedHeadersOk !== undefined && typeof entry.unsignedHeadersOk !== 'boolean')
    throw new ConfigError(`${where}: "unsignedHeadersOk" is true or false.`);
  const unsigned = (['id', 'type'] as const).filter((key) => 'header' in { id, type }[key]);
  if (unsigned.length > 0 && entry.unsignedHeadersOk !== true) {
    throw new ConfigError(
      `${where}: ${unsigned.map((key) => `"${key}"`).join(' and ')} ${unsigned.length > 1 ? 'come' : 'comes'} from a header the signature does not cover; read ${unsigned.length > 1 ? 'them' : 'it'} from the body with { pointer: … }, or set "unsignedHeadersOk: true" to accept it (the same body sent again under another value is then refused as a replay).`,
    );
  }
  return { id, type };
}

function fieldSource(value: unknown, key: string, where: string): FieldSource {
  const field = value as Record<string, unknown> | undefined;
  const keys = typeof field === 'object' && field !== null ? Object.keys(field) : [];
  if (keys.length === 1 && typeof field!.header === 'string' && field!.header !== '') return { header: field!.header.toLowerCase() };
  if (keys.length === 1 && typeof field!.pointer === 'string' && /^(\/[^/]*)+$/.test(field!.pointer)) return { pointer: field!.pointer };
  throw new ConfigError(`${where}: "${key}" is { header: <name> } or { pointer: /json/pointer } into the body.`);
}

export const hmacProvider = defineProvider({
  kind: ProviderKind.HMAC,
  description: 'Any sender that signs an HMAC, declared in WEBHOOKS_CONFIG: the header, what is signed, and where the ID and type are.',
  create: (config) => {
    if (!config.hmac) throw new ConfigError(`Source "${config.name}": an hmac source declares its "signature", "id" and "type".`);
    return createHmacAdapter({ source: config.name, secrets: config.secrets, spec: config.hmac });
  },
  samples: {},
  // The long tail: as much as any sender may need; a source sets its own with `maxBodyBytes`.
  maxBodyBytes: 25 * MIB,
});
