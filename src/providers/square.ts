import { randomUUID } from 'node:crypto';
import { SignatureVerificationError } from '../core/delivery-errors';
import { requiredHeader } from './headers';
import { isoTime, objectId, parseJsonObject, requireString } from './json';
import { firstSecret, hmacSha256, safeEqual } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent, type VerifiedEvent } from './types';
import squarePaymentUpdated from './fixtures/square.payment.updated.json';
import { MIB } from './limits';
import { defineProvider, signedUrl } from './define';

/**
 * Square: `X-Square-HmacSha256-Signature`, the base64 HMAC-SHA256 of the notification URL followed
 * by the raw body, computed over the exact bytes received once per signature key and compared in
 * constant time. The `square` package's `WebhooksHelper.verifySignature` is the reference the tests
 * check our verdicts against; it is not called here because it verifies a decoded copy of the body,
 * compares with `===`, and its entry point loads the whole API client (two seconds, 80 MB). The URL is the one registered with Square, from configuration
 * (`SQUARE_WEBHOOK_URL`), never rebuilt from the request or a proxy's headers. The event ID is
 * `event_id`, the type `type`. Square signs no timestamp.
 * https://developer.squareup.com/docs/webhooks/step3validate
 */
export function createSquareAdapter(options: { source: string; secrets: readonly string[]; url: string }): ProviderAdapter {
  const { source, secrets, url } = options;
  return adapter({
    kind: ProviderKind.SQUARE,
    fields: { id: '"event_id"', type: '"type"' },
    contentTypes: ['application/json'],
    signatureHeaders: ['x-square-hmacsha256-signature'],

    async check({ rawBody, headers }: Delivery) {
      const signatureHeader = requiredHeader(headers, 'x-square-hmacsha256-signature', source);
      const signed = Buffer.concat([Buffer.from(url), rawBody]);
      if (!secrets.some((signatureKey) => safeEqual(signatureHeader, hmacSha256(signatureKey, signed, 'base64')))) {
        throw new SignatureVerificationError(`X-Square-HmacSha256-Signature does not match ${url} and the body with any configured signature key.`, {
          source: source,
        });
      }
      return {};
    },

    read({ rawBody, receivedAt }: Delivery) {
      return { events: [readSquareEvent(parseJsonObject(rawBody.toString('utf8'), source), receivedAt, source)] };
    },

    sampleId: () => randomUUID(),

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const object = type.split('.')[0] ?? type;
      const body = JSON.stringify({
        merchant_id: 'MLDEVELOPMENT',
        type,
        event_id: id,
        created_at: timestamp.toISOString(),
        data: { type: object, id: String(payload.id ?? `${object}_sample`), object: { [object]: payload } },
      });
      return {
        headers: { 'content-type': 'application/json', 'x-square-hmacsha256-signature': hmacSha256(firstSecret(secrets, source), url + body, 'base64') },
        body,
      };
    },
  });
}

/**
 * The event the receiver makes of a Square event, whether it came in a verified notification or
 * from the Events API (backfill): the two carry the same JSON.
 */
export function readSquareEvent(payload: Record<string, unknown>, receivedAt: Date, source: string): VerifiedEvent {
  return {
    id: requireString(payload.event_id, 'event ID ("event_id")', source),
    type: requireString(payload.type, 'type ("type")', source),
    occurredAt: isoTime(payload.created_at, receivedAt),
    subject: objectId(payload.data),
    payload,
  };
}

export const squareProvider = defineProvider({
  kind: ProviderKind.SQUARE,
  description: 'Square: `X-Square-HmacSha256-Signature`, HMAC-SHA256 over the notification URL and the body.',
  builtIn: {
    name: 'square',
    secretEnv: 'SQUARE_WEBHOOK_SIGNATURE_KEY',
    developmentSecret: 'square-durable-webhooks-development-only',
    urlEnv: 'SQUARE_WEBHOOK_URL',
  },
  create: (config) => createSquareAdapter({ source: config.name, secrets: config.secrets, url: signedUrl(config) }),
  samples: { 'payment.updated': squarePaymentUpdated },
  // One object's JSON; Square documents no maximum.
  maxBodyBytes: 5 * MIB,
});
