/**
 * Signatures made with each provider's own library (or node:crypto for ed25519), never with our
 * adapters, so a bug in our verification cannot hide behind the same bug in our signing.
 */
import { createHmac, createSign, generateKeyPairSync, randomUUID, sign as signEd25519 } from 'node:crypto';
import AdyenHmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import { sign as signGitHub } from '@octokit/webhooks-methods';
import { getHmac as getShopifyHmac } from '@shopify/shopify-api/test-helpers';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';

const stripe = new Stripe('sk_test_signing_only');

export function stripeEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `evt_test_${Math.random().toString(36).slice(2, 14)}`,
    object: 'event',
    api_version: '2025-09-30.clover',
    created: Math.floor(Date.now() / 1000),
    type: 'checkout.session.completed',
    data: { object: { id: 'cs_test_123', object: 'checkout.session', amount_total: 4200, currency: 'eur' } },
    livemode: false,
    ...overrides,
  };
}

export function stripeHeaders(body: string, secret: string, timestampSeconds?: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: timestampSeconds }),
  };
}

export async function githubHeaders(
  body: string,
  secret: string,
  { delivery, event, contentType = 'application/json' }: { delivery: string; event: string; contentType?: string },
): Promise<Record<string, string>> {
  return {
    'content-type': contentType,
    'x-github-delivery': delivery,
    'x-github-event': event,
    'x-hub-signature-256': await signGitHub(secret, body),
  };
}

export function standardHeaders(body: string, secret: string, { id, timestamp = new Date() }: { id: string; timestamp?: Date }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, timestamp, body),
  };
}

/** An ed25519 key pair as Standard Webhooks writes it: `whpk_` + base64 of the raw public key. */
export function ed25519KeyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    whpk: `whpk_${raw.toString('base64')}`,
    /** The `v1a,<base64>` signature of `id.timestamp.body`. */
    sign: (id: string, timestampSeconds: number, body: string) =>
      `v1a,${signEd25519(null, Buffer.from(`${id}.${timestampSeconds}.${body}`), privateKey).toString('base64')}`,
  };
}

export const SECRETS = {
  stripe: 'whsec_test_stripe_secret_one',
  stripeRotated: 'whsec_test_stripe_secret_two',
  github: 'github-test-secret-one',
  githubRotated: 'github-test-secret-two',
  standard: `whsec_${Buffer.from('standard-test-secret-one-32bytes').toString('base64')}`,
  standardRotated: `whsec_${Buffer.from('standard-test-secret-two-32bytes').toString('base64')}`,
};

/** The signing secrets every test receiver is configured with (two of each, for rotation). */
export const SECRETS_ENV = {
  STRIPE_WEBHOOK_SECRET: SECRETS.stripe,
  STRIPE_WEBHOOK_SECRET_PREVIOUS: SECRETS.stripeRotated,
  GITHUB_WEBHOOK_SECRET: SECRETS.github,
  GITHUB_WEBHOOK_SECRET_PREVIOUS: SECRETS.githubRotated,
  STANDARD_WEBHOOK_SECRET: SECRETS.standard,
  STANDARD_WEBHOOK_SECRET_PREVIOUS: SECRETS.standardRotated,
};

/*
 * The providers added with the catalog. Where a provider's library signs (Svix, Shopify's test
 * helpers, Twilio, Adyen) the signature comes from it; where it only verifies (Paddle, Square,
 * Slack, Linear, SendGrid) the test signs with the provider's documented algorithm in node:crypto,
 * never with our adapters.
 */

export const CATALOG_SECRETS = {
  svix: `whsec_${Buffer.from('svix-test-secret-one-32-bytes!!!').toString('base64')}`,
  svixRotated: `whsec_${Buffer.from('svix-test-secret-two-32-bytes!!!').toString('base64')}`,
  shopify: 'shopify-test-secret-one',
  shopifyRotated: 'shopify-test-secret-two',
  paddle: 'pdl_ntfset_test_secret_one',
  paddleRotated: 'pdl_ntfset_test_secret_two',
  square: 'square-test-signature-key-one',
  squareRotated: 'square-test-signature-key-two',
  slack: 'slack-test-signing-secret-one',
  slackRotated: 'slack-test-signing-secret-two',
  linear: 'lin_wh_test_secret_one',
  linearRotated: 'lin_wh_test_secret_two',
  twilio: 'twilio-test-auth-token-one',
  twilioRotated: 'twilio-test-auth-token-two',
  adyen: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
  adyenRotated: 'A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90',
  /** The public URLs Square and Twilio sign: configuration, not where the test server listens. */
  squareUrl: 'https://hooks.example.com/webhooks/square',
  twilioUrl: 'https://hooks.example.com/webhooks/twilio?account=main',
};

/** A SendGrid verification key pair: the base64 SPKI public key of the mail settings, and its signer. */
export function sendgridKeyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    /** Headers as SendGrid sends them: ECDSA (SHA-256) of `<timestamp><body>`, base64 DER. */
    headers: (body: string, timestampSeconds: number): Record<string, string> => ({
      'content-type': 'application/json',
      'x-twilio-email-event-webhook-timestamp': String(timestampSeconds),
      'x-twilio-email-event-webhook-signature': createSign('sha256').update(`${timestampSeconds}${body}`).sign(privateKey).toString('base64'),
    }),
  };
}

export const SENDGRID_KEYS = sendgridKeyPair();

export const CATALOG_SECRETS_ENV = {
  SVIX_WEBHOOK_SECRET: CATALOG_SECRETS.svix,
  SVIX_WEBHOOK_SECRET_PREVIOUS: CATALOG_SECRETS.svixRotated,
  SHOPIFY_WEBHOOK_SECRET: CATALOG_SECRETS.shopify,
  SHOPIFY_WEBHOOK_SECRET_PREVIOUS: CATALOG_SECRETS.shopifyRotated,
  PADDLE_WEBHOOK_SECRET: CATALOG_SECRETS.paddle,
  PADDLE_WEBHOOK_SECRET_PREVIOUS: CATALOG_SECRETS.paddleRotated,
  SQUARE_WEBHOOK_SIGNATURE_KEY: CATALOG_SECRETS.square,
  SQUARE_WEBHOOK_SIGNATURE_KEY_PREVIOUS: CATALOG_SECRETS.squareRotated,
  SQUARE_WEBHOOK_URL: CATALOG_SECRETS.squareUrl,
  SLACK_SIGNING_SECRET: CATALOG_SECRETS.slack,
  SLACK_SIGNING_SECRET_PREVIOUS: CATALOG_SECRETS.slackRotated,
  LINEAR_WEBHOOK_SECRET: CATALOG_SECRETS.linear,
  LINEAR_WEBHOOK_SECRET_PREVIOUS: CATALOG_SECRETS.linearRotated,
  TWILIO_AUTH_TOKEN: CATALOG_SECRETS.twilio,
  TWILIO_AUTH_TOKEN_PREVIOUS: CATALOG_SECRETS.twilioRotated,
  TWILIO_WEBHOOK_URL: CATALOG_SECRETS.twilioUrl,
  SENDGRID_WEBHOOK_PUBLIC_KEY: SENDGRID_KEYS.publicKey,
  ADYEN_HMAC_KEY: CATALOG_SECRETS.adyen,
  ADYEN_HMAC_KEY_PREVIOUS: CATALOG_SECRETS.adyenRotated,
};

export function svixHeaders(body: string, secret: string, { id, timestamp = new Date() }: { id: string; timestamp?: Date }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'svix-id': id,
    'svix-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'svix-signature': new SvixWebhook(secret).sign(id, timestamp, body),
  };
}

export function shopifyHeaders(
  body: string,
  secret: string,
  { eventId, webhookId = randomUUID(), topic = 'orders/paid' }: { eventId?: string; webhookId?: string; topic?: string },
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-shopify-topic': topic,
    'x-shopify-shop-domain': 'durable-test.myshopify.com',
    'x-shopify-api-version': '2025-10',
    'x-shopify-webhook-id': webhookId,
    ...(eventId && { 'x-shopify-event-id': eventId }),
    'x-shopify-triggered-at': '2026-12-01T10:00:00.000Z',
    'x-shopify-hmac-sha256': getShopifyHmac(body, secret),
  };
}

/** Paddle-Signature as Paddle documents it: `ts=<seconds>;h1=<hex HMAC-SHA256 of "ts:body">`, one `h1` per secret given. */
export function paddleHeaders(body: string, secrets: readonly string[], timestampSeconds: number): Record<string, string> {
  const h1 = secrets.map((secret) => `h1=${createHmac('sha256', secret).update(`${timestampSeconds}:${body}`).digest('hex')}`);
  return { 'content-type': 'application/json', 'paddle-signature': [`ts=${timestampSeconds}`, ...h1].join(';') };
}

/** X-Square-HmacSha256-Signature as Square documents it: base64 HMAC-SHA256 of the notification URL and the body. */
export function squareHeaders(body: string, key: string, url: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-square-hmacsha256-signature': createHmac('sha256', key)
      .update(url + body)
      .digest('base64'),
  };
}

/** Slack's `v0` signature of `v0:<timestamp>:<body>`. */
export function slackHeaders(body: string, secret: string, timestampSeconds: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-slack-request-timestamp': String(timestampSeconds),
    'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestampSeconds}:${body}`).digest('hex')}`,
  };
}

/** Linear-Signature: hex HMAC-SHA256 of the body. */
export function linearHeaders(body: string, secret: string, delivery: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'linear-delivery': delivery,
    'linear-event': 'Issue',
    'linear-signature': createHmac('sha256', secret).update(body).digest('hex'),
  };
}

/** A Twilio status callback, form-encoded and signed by the `twilio` package. */
export function twilioRequest(params: Record<string, string>, authToken: string, url: string, idempotencyToken?: string) {
  return {
    body: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(idempotencyToken && { 'i-twilio-idempotency-token': idempotencyToken }),
      'x-twilio-signature': getExpectedTwilioSignature(authToken, url, params),
    } as Record<string, string>,
  };
}

/** An Adyen NotificationRequestItem signed by `@adyen/api-library`'s own hmacValidator. */
export function adyenItem(key: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const item = {
    amount: { currency: 'EUR', value: 4200 },
    eventCode: 'AUTHORISATION',
    eventDate: '2026-12-01T10:00:00+01:00',
    merchantAccountCode: 'DurableTest',
    merchantReference: 'ord_1001',
    pspReference: `88${Math.floor(Math.random() * 1e14)
      .toString()
      .padStart(14, '0')}`,
    reason: '',
    success: 'true',
    ...overrides,
  };
  return { ...item, additionalData: { hmacSignature: new AdyenHmacValidator().calculateHmac(item as never, key) } };
}

export function adyenBody(items: ReadonlyArray<Record<string, unknown>>): string {
  return JSON.stringify({ live: 'false', notificationItems: items.map((item) => ({ NotificationRequestItem: item })) });
}
