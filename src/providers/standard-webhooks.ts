import { createHmac, createPublicKey, randomBytes, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ConfigError } from '../core/errors';
import { SignatureVerificationError } from '../core/delivery-errors';
import { checkTolerance, requiredHeader } from './headers';
import { objectId, parseJsonObject, requireString, utf8Text } from './json';
import { MAX_ED25519_SIGNATURES, MIB, signatureEntries } from './limits';
import { firstSecret, matchesAny } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, TIMESTAMP_TOLERANCE_SECONDS, type Delivery, type ProviderAdapter, type SampleEvent } from './types';
import standardOrderCreated from './fixtures/standard.order.created.json';
import svixUserCreated from './fixtures/svix.user.created.json';
import { defineProvider } from './define';

const PUBLIC_KEY_PREFIX = 'whpk_';

/**
 * Standard Webhooks: `v1` HMAC-SHA256 signatures computed with `node:crypto` for each `whsec_`
 * secret (the `standardwebhooks` package, whose HMAC is pure JavaScript and several times slower,
 * reads the secrets, signs the samples and is the tests' oracle), and `v1a` ed25519 signatures
 * checked with each `whpk_` public key.
 * The timestamp is checked here, against the injected clock, before any signature.
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 *
 * Svix (and every sender built on it: Clerk, Resend, …) signs the same way under `svix-*` header
 * names; the `svix` package itself is built on `standardwebhooks`.
 * https://docs.svix.com/receiving/verifying-payloads/how-manual
 */
export function createStandardWebhooksAdapter(options: {
  source: string;
  secrets: readonly string[];
  publicKeys: readonly string[];
  /** `svix` for Svix's header names. @default standard */
  flavour?: 'standard' | 'svix';
}): ProviderAdapter {
  const { source } = options;
  const svix = options.flavour === 'svix';
  const prefix = svix ? 'svix' : 'webhook';
  const [idHeader, timestampHeader, signatureHeader] = [`${prefix}-id`, `${prefix}-timestamp`, `${prefix}-signature`] as const;
  const keys = options.secrets.map((secret) => hmacKey(secret, source));
  const publicKeys = options.publicKeys.map((key) => toPublicKey(key, source));

  return adapter({
    kind: svix ? ProviderKind.SVIX : ProviderKind.STANDARD_WEBHOOKS,
    fields: { id: `${idHeader} header`, type: '"type"' },
    contentTypes: ['application/json'],
    signatureHeaders: [idHeader, timestampHeader, signatureHeader],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const id = requiredHeader(headers, idHeader, source);
      const timestamp = requiredHeader(headers, timestampHeader, source);
      const signature = requiredHeader(headers, signatureHeader, source);
      const seconds = checkTimestamp(timestamp, timestampHeader, receivedAt, source);

      const versioned = signatureEntries(signature.split(' '), signatureHeader, source);
      // The specification signs text: strictly decoded, so what is verified are the bytes received.
      utf8Text(rawBody, source);
      const signed = Buffer.concat([Buffer.from(`${id}.${seconds}.`), rawBody]);
      if (
        !hmacMatches(keys, versioned, signed) &&
        !ed25519Matches(versioned, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), rawBody]), publicKeys, signatureHeader, source)
      ) {
        throw new SignatureVerificationError(`${signatureHeader} does not match the body with any configured secret or public key.`, { source: source });
      }
      return {};
    },

    read({ rawBody, headers }: Delivery) {
      // Both headers are signed: check accepted them.
      const id = requiredHeader(headers, idHeader, source);
      const seconds = Number(requiredHeader(headers, timestampHeader, source));
      const payload = parseJsonObject(rawBody.toString('utf8'), source);
      const type = requireString(payload.type, 'type ("type")', source);
      return { events: [{ id, type, occurredAt: new Date(seconds * 1000).toISOString(), subject: subjectOf(payload.data), payload }] };
    },

    sampleId: () => `msg_${randomBytes(12).toString('hex')}`,

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const body = JSON.stringify({ type, timestamp: timestamp.toISOString(), data: payload });
      const secret = firstSecret(options.secrets, source);
      return {
        headers: {
          'content-type': 'application/json',
          [idHeader]: id,
          [timestampHeader]: String(Math.floor(timestamp.getTime() / 1000)),
          [signatureHeader]: new Webhook(secret).sign(id, timestamp, body),
        },
        body,
      };
    },
  });
}

function checkTimestamp(header: string, name: string, receivedAt: Date, source: string): number {
  if (!/^\d+$/.test(header)) {
    throw new SignatureVerificationError(`${name} must be whole seconds since the epoch.`, { source: source });
  }
  const seconds = Number(header);
  checkTolerance(seconds, receivedAt, TIMESTAMP_TOLERANCE_SECONDS, name, source);
  return seconds;
}

/**
 * `v1,<base64>` entries, each compared in constant time with the HMAC-SHA256 of `id.seconds.body`
 * under each secret, computed once per secret whatever the number of entries.
 */
function hmacMatches(keys: readonly Buffer[], versioned: readonly string[], signed: Buffer): boolean {
  const offered = versioned.filter((entry) => entry.startsWith('v1,'));
  if (offered.length === 0) return false;
  return keys.some((key) => matchesAny(offered, `v1,${createHmac('sha256', key).update(signed).digest('base64')}`));
}

/**
 * `v1a,<base64>` entries, verified as ed25519 over the raw bytes of `id.timestamp.body` with each
 * public key. An ed25519 signature cannot be computed once and compared, so each well-formed entry
 * (64 bytes) costs a verification per key: a header offering more than `MAX_ED25519_SIGNATURES` is
 * refused before any is verified.
 */
function ed25519Matches(versioned: readonly string[], content: Buffer, keys: readonly KeyObject[], header: string, source: string): boolean {
  if (keys.length === 0) return false;
  const offered = versioned.filter((entry) => entry.startsWith('v1a,'));
  if (offered.length > MAX_ED25519_SIGNATURES) {
    throw new SignatureVerificationError(`${header} offers ${offered.length} v1a signatures; at most ${MAX_ED25519_SIGNATURES} are checked.`, {
      source: source,
    });
  }
  return offered.some((entry) => {
    const signature = Buffer.from(entry.slice('v1a,'.length), 'base64');
    return signature.length === ED25519_SIGNATURE_BYTES && keys.some((key) => verifyEd25519(null, content, key, signature));
  });
}

const ED25519_SIGNATURE_BYTES = 64;

/**
 * The key of a `whsec_` secret: the bytes of its base64, checked as strictly as the package checks
 * them (it refuses what is not base64, which Node's decoder would quietly skip).
 */
function hmacKey(secret: string, source: string): Buffer {
  try {
    new Webhook(secret);
  } catch {
    throw new ConfigError(`Source "${source}": a Standard Webhooks secret must be "whsec_" followed by base64.`);
  }
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

const SECRET_PREFIX = 'whsec_';

/** A `whpk_` key is the base64 of the raw 32-byte ed25519 public key. */
function toPublicKey(key: string, source: string): KeyObject {
  const raw = key.startsWith(PUBLIC_KEY_PREFIX) ? Buffer.from(key.slice(PUBLIC_KEY_PREFIX.length), 'base64') : undefined;
  if (raw?.length !== 32) {
    throw new ConfigError(`Source "${source}": a Standard Webhooks public key must be "${PUBLIC_KEY_PREFIX}" followed by the base64 of 32 bytes.`);
  }
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

function subjectOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const orderId = (data as Record<string, unknown>).orderId;
  return objectId(data) ?? (typeof orderId === 'string' ? orderId : undefined);
}

export const standardWebhooksProvider = defineProvider({
  kind: ProviderKind.STANDARD_WEBHOOKS,
  description: 'Standard Webhooks: `webhook-signature`, HMAC-SHA256 (`v1`) over `<id>.<timestamp>.<body>`, or ed25519 (`v1a`) with `whpk_` public keys.',
  builtIn: {
    name: 'standard',
    secretEnv: 'STANDARD_WEBHOOK_SECRET',
    developmentSecret: 'whsec_ZHVyYWJsZS13ZWJob29rcyBkZXZlbG9wbWVudCBrZXk=',
    publicKeyEnv: 'STANDARD_WEBHOOK_PUBLIC_KEY',
  },
  create: ({ name, secrets, publicKeys }) => createStandardWebhooksAdapter({ source: name, secrets, publicKeys }),
  samples: { 'order.created': standardOrderCreated },
  // One message's JSON; the specification sets no maximum.
  maxBodyBytes: 5 * MIB,
});

export const svixProvider = defineProvider({
  kind: ProviderKind.SVIX,
  description: 'Senders on Svix (Clerk, Resend, …): Standard Webhooks signed under `svix-` headers.',
  builtIn: { name: 'svix', secretEnv: 'SVIX_WEBHOOK_SECRET', developmentSecret: 'whsec_ZHVyYWJsZS13ZWJob29rcyBzdml4IGRldmVsb3BtZW50' },
  create: ({ name, secrets, publicKeys }) => createStandardWebhooksAdapter({ source: name, secrets, publicKeys, flavour: 'svix' }),
  samples: { 'user.created': svixUserCreated },
  // One message's JSON; the specification sets no maximum.
  maxBodyBytes: 5 * MIB,
});
