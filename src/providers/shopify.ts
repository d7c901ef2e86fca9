import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { ApiVersion, LogSeverity, shopifyApi, type Shopify } from '@shopify/shopify-api';
import { SignatureVerificationError } from '../core/delivery-errors';
import { optionalHeader, requiredHeader } from './headers';
import { isoTime, objectId, parseJsonObject, utf8Text } from './json';
import { firstSecret, hmacSha256 } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent } from './types';
import shopifyOrdersPaid from './fixtures/shopify.orders-paid.json';
import { MIB } from './limits';
import { defineProvider } from './define';

const SAMPLE_API_VERSION = ApiVersion.October25;

/**
 * Loads the library's Node.js runtime (request conversion, crypto) into the same CommonJS instance
 * `shopifyApi` comes from. By a name TypeScript does not resolve: the package ships this subpath's
 * sources, which do not compile under this project's settings, next to its built files.
 */
const loadNodeAdapter = () => createRequire(__filename)('@shopify/shopify-api/adapters/node' as string);

/**
 * Shopify: `X-Shopify-Hmac-SHA256` (base64 HMAC-SHA256 of the raw body) checked by
 * `@shopify/shopify-api`'s `webhooks.validate` with each configured secret in turn.
 * The event ID is `X-Shopify-Event-Id`, the same for one event across several subscriptions, or
 * `X-Shopify-Webhook-Id` (one delivery) where a shop sends no event ID; the type is
 * `X-Shopify-Topic` (`orders/paid`). Shopify signs no timestamp, so there is no replay window: the
 * engine and the ledger refuse a second copy of an ID.
 * https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook
 */
export function createShopifyAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  // One client per secret: the library validates with the app secret it was configured with.
  loadNodeAdapter();
  const clients: Shopify[] = secrets.map((apiSecretKey) =>
    shopifyApi({
      apiKey: 'durable-webhooks',
      apiSecretKey,
      hostName: 'localhost',
      apiVersion: SAMPLE_API_VERSION,
      isEmbeddedApp: false,
      // Its log lines would repeat what our problem document says.
      logger: { level: LogSeverity.Error, log: async () => undefined },
    }),
  );

  return adapter({
    kind: ProviderKind.SHOPIFY,
    fields: { id: 'X-Shopify-Event-Id header (or X-Shopify-Webhook-Id)', type: 'X-Shopify-Topic header', unsigned: ['id', 'type'] },
    contentTypes: ['application/json'],
    signatureHeaders: [
      'x-shopify-hmac-sha256',
      'x-shopify-topic',
      'x-shopify-shop-domain',
      'x-shopify-api-version',
      'x-shopify-webhook-id',
      'x-shopify-event-id',
      'x-shopify-triggered-at',
    ],

    async check({ rawBody, headers }: Delivery) {
      requiredHeader(headers, 'x-shopify-hmac-sha256', source);
      const request = { rawBody: utf8Text(rawBody, source), rawRequest: { headers, method: 'POST', url: `/webhooks/${source}` } };
      let missing: string[] = [];
      for (const client of clients) {
        const result = await client.webhooks.validate(request);
        if (result.valid) return {};
        if ('missingHeaders' in result) missing = result.missingHeaders;
      }
      if (missing.length > 0) throw new SignatureVerificationError(`The signed delivery lacks the ${missing.join(', ')} header(s).`, { source: source });
      throw new SignatureVerificationError('X-Shopify-Hmac-SHA256 does not match the body with any configured secret.', { source: source });
    },

    read({ rawBody, headers, receivedAt }: Delivery) {
      const payload = parseJsonObject(rawBody.toString('utf8'), source);
      return {
        events: [
          {
            // The library's own choice: the event ID, else the webhook ID (one delivery).
            id: optionalHeader(headers, 'x-shopify-event-id') ?? requiredHeader(headers, 'x-shopify-webhook-id', source),
            type: requiredHeader(headers, 'x-shopify-topic', source),
            occurredAt: isoTime(optionalHeader(headers, 'x-shopify-triggered-at'), receivedAt),
            subject: objectId(payload),
            payload,
          },
        ],
      };
    },

    sampleId: () => randomUUID(),

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const body = JSON.stringify(payload);
      return {
        headers: {
          'content-type': 'application/json',
          'x-shopify-topic': type,
          'x-shopify-shop-domain': 'durable-webhooks-dev.myshopify.com',
          'x-shopify-api-version': SAMPLE_API_VERSION,
          'x-shopify-webhook-id': randomUUID(),
          'x-shopify-event-id': id,
          'x-shopify-triggered-at': timestamp.toISOString(),
          'x-shopify-hmac-sha256': hmacSha256(firstSecret(secrets, source), body, 'base64'),
        },
        body,
      };
    },
  });
}

export const shopifyProvider = defineProvider({
  kind: ProviderKind.SHOPIFY,
  description: 'Shopify: `X-Shopify-Hmac-Sha256`, HMAC-SHA256 over the body, verified by `@shopify/shopify-api`; the event ID and topic are unsigned.',
  builtIn: { name: 'shopify', secretEnv: 'SHOPIFY_WEBHOOK_SECRET', developmentSecret: 'shopify-durable-webhooks-development-only' },
  create: ({ name, secrets }) => createShopifyAdapter({ source: name, secrets }),
  samples: { 'orders/paid': shopifyOrdersPaid },
  // One resource's JSON (an order with many lines stays far under this); Shopify documents no maximum.
  maxBodyBytes: 5 * MIB,
});
