/**
 * Signatures made with each provider's own library (or node:crypto for ed25519), never with our
 * adapters, so a bug in our verification cannot hide behind the same bug in our signing.
 */
import { generateKeyPairSync, sign as signEd25519 } from 'node:crypto';
import { sign as signGitHub } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';

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
