import { randomBytes } from 'node:crypto';
import { SignatureVerificationError } from '../core/delivery-errors';
import { checkTolerance, requiredHeader } from './headers';
import { isoTime, objectId, parseJsonObject, requireString } from './json';
import { MIB, signatureEntries } from './limits';
import { firstSecret, hmacSha256Hex, matchesAny } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent, type VerifiedEvent } from './types';
import paddleTransactionCompleted from './fixtures/paddle.transaction.completed.json';
import { defineProvider } from './define';

/** Paddle's SDKs refuse a signature older than this. */
export const PADDLE_TOLERANCE_SECONDS = 5;

/**
 * Paddle Billing: `Paddle-Signature: ts=…;h1=…`, the hex HMAC-SHA256 of `<ts>:<raw body>` with the
 * notification destination's secret. During Paddle's own secret rotation one header carries several
 * `h1` values (at most `MAX_SIGNATURE_ENTRIES`), each compared with the one HMAC each secret makes. The event ID is `event_id`, the type `event_type`.
 * https://developer.paddle.com/webhooks/signature-verification
 *
 * `@paddle/paddle-node-sdk`'s `webhooks.unmarshal` is the reference the tests check our verdicts
 * against; it is not called here because it reads the wall clock before the HMAC (so a stored body
 * could never be verified again), keeps only the last `h1` (so a rotation refuses half the traffic)
 * and compares with `===`.
 */
export function createPaddleAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  return adapter({
    kind: ProviderKind.PADDLE,
    fields: { id: '"event_id"', type: '"event_type"' },
    contentTypes: ['application/json'],
    signatureHeaders: ['paddle-signature'],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const { ts, h1 } = parseSignature(requiredHeader(headers, 'paddle-signature', source), source);
      checkTolerance(Number(ts), receivedAt, PADDLE_TOLERANCE_SECONDS, 'The Paddle-Signature timestamp', source);
      const signed = Buffer.concat([Buffer.from(`${ts}:`), rawBody]);
      // One HMAC per secret, compared with each offered h1.
      if (!secrets.some((secret) => matchesAny(h1, hmacSha256Hex(secret, signed)))) {
        throw new SignatureVerificationError('Paddle-Signature does not match the body with any configured secret.', { source: source });
      }
      return {};
    },

    read({ rawBody, receivedAt }: Delivery) {
      return { events: [readPaddleEvent(parseJsonObject(rawBody.toString('utf8'), source), receivedAt, source)] };
    },

    sampleId: () => `evt_${randomBytes(13).toString('hex')}`,

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const body = JSON.stringify({
        event_id: id,
        event_type: type,
        occurred_at: timestamp.toISOString(),
        notification_id: `ntf_${randomBytes(13).toString('hex')}`,
        data: payload,
      });
      const ts = Math.floor(timestamp.getTime() / 1000);
      return {
        headers: { 'content-type': 'application/json', 'paddle-signature': `ts=${ts};h1=${hmacSha256Hex(firstSecret(secrets, source), `${ts}:${body}`)}` },
        body,
      };
    },
  });
}

/** `ts=<seconds>;h1=<hex>[;h1=<hex>…]`. */
function parseSignature(header: string, source: string): { ts: string; h1: readonly string[] } {
  let ts: string | undefined;
  const h1: string[] = [];
  for (const part of header.split(';')) {
    const [key, value] = part.trim().split('=');
    if (key === 'ts' && value && /^\d+$/.test(value)) ts = value;
    if (key === 'h1' && value) h1.push(value);
  }
  if (ts === undefined || h1.length === 0) throw new SignatureVerificationError('Paddle-Signature must be "ts=<seconds>;h1=<signature>".', { source: source });
  return { ts, h1: signatureEntries(h1, 'Paddle-Signature', source) };
}

/**
 * The event the receiver makes of a Paddle event entity, whether it came in a verified delivery or
 * from the events API (backfill): a notification's body is the event entity itself.
 */
export function readPaddleEvent(payload: Record<string, unknown>, receivedAt: Date, source: string): VerifiedEvent {
  return {
    id: requireString(payload.event_id, 'event ID ("event_id")', source),
    type: requireString(payload.event_type, 'type ("event_type")', source),
    occurredAt: isoTime(payload.occurred_at, receivedAt),
    subject: objectId(payload.data),
    payload,
  };
}

export const paddleProvider = defineProvider({
  kind: ProviderKind.PADDLE,
  description: 'Paddle Billing: `Paddle-Signature`, HMAC-SHA256 over `<ts>:<body>`.',
  builtIn: { name: 'paddle', secretEnv: 'PADDLE_WEBHOOK_SECRET', developmentSecret: 'pdl_ntfset_durable_webhooks_development_only' },
  create: ({ name, secrets }) => createPaddleAdapter({ source: name, secrets }),
  samples: { 'transaction.completed': paddleTransactionCompleted },
  // One entity's JSON; Paddle documents no maximum.
  maxBodyBytes: 5 * MIB,
});
