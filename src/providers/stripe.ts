import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';
import { objectId, parseJsonObject, requireString, stringsAt } from './json';
import { firstSecret } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, TIMESTAMP_TOLERANCE_SECONDS, type Delivery, type ProviderAdapter, type SampleEvent, type VerifiedEvent } from './types';
import stripeChargeRefunded from './fixtures/stripe.charge.refunded.json';
import stripeCheckoutCompleted from './fixtures/stripe.checkout.session.completed.json';
import stripeCustomerUpdated from './fixtures/stripe.customer.updated.json';
import { MIB } from './limits';
import { defineProvider } from './define';

/** The Stripe API version our sample events claim; verification accepts any version. */
const SAMPLE_API_VERSION = '2025-09-30.clover';

// Only the webhook helpers are used; they never call the API, so the key is a placeholder.
const webhooks = new Stripe('sk_test_unused_by_webhook_verification').webhooks;
const signatures = webhooks.signature!;

/**
 * Stripe: `Stripe-Signature` checked by `stripe.webhooks.signature.verifyHeader` (what
 * `constructEvent` checks before it parses) with each configured secret in turn (several during
 * rotation), 300 s tolerance.
 * https://docs.stripe.com/webhooks#verify-events
 */
export function createStripeAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  return adapter({
    kind: ProviderKind.STRIPE,
    fields: { id: '"id"', type: '"type"' },
    contentTypes: ['application/json'],
    signatureHeaders: ['stripe-signature'],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const header = headers['stripe-signature'];
      if (typeof header !== 'string' || header === '') {
        throw new SignatureVerificationError('The Stripe-Signature header is missing.', { source: source });
      }
      let lastFailure = 'No signature matches any configured secret.';
      for (const secret of secrets) {
        try {
          signatures.verifyHeader(rawBody, header, secret, TIMESTAMP_TOLERANCE_SECONDS, undefined, receivedAt.getTime());
          // stripe-node checks only the age; a timestamp from the future is refused here, as Standard Webhooks does.
          if (signedAt(header) - receivedAt.getTime() / 1000 > TIMESTAMP_TOLERANCE_SECONDS) throw outsideTolerance(source);
          return {};
        } catch (error) {
          if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) throw error;
          // Stripe checks the tolerance only after a signature matched, so this secret is the right one.
          if (error.message.startsWith('Timestamp outside the tolerance zone')) throw outsideTolerance(source);
          lastFailure = firstLine(error.message);
        }
      }
      throw new SignatureVerificationError(lastFailure, { source: source });
    },

    read({ rawBody }: Delivery) {
      const parsed = parseJsonObject(rawBody.toString('utf8'), source);
      return { events: [parsed.object === THIN_EVENT ? readThinEvent(parsed, source) : readStripeEvent(parsed, source)] };
    },

    sampleId: () => `evt_${randomBytes(12).toString('hex')}`,

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const created = Math.floor(timestamp.getTime() / 1000);
      const signed = (body: string) => ({
        headers: {
          'content-type': 'application/json',
          'stripe-signature': webhooks.generateTestHeaderString({ payload: body, secret: firstSecret(secrets, source), timestamp: created }),
        },
        body,
      });
      if (isThinType(type)) return signed(JSON.stringify(thinNotification({ id, type, payload, timestamp })));
      const body = JSON.stringify({
        id,
        object: 'event',
        api_version: SAMPLE_API_VERSION,
        created,
        data: { object: payload },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      });
      return signed(body);
    },
  });
}

/**
 * The event the receiver makes of a Stripe event object, whether it came in a verified delivery or
 * from the Events API (backfill): the same ID, type, time, subject and payload.
 */
export function readStripeEvent(parsed: unknown, source: string): VerifiedEvent {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new MalformedEventError('The body must be a JSON object.', { source: source });
  }
  const event = parsed as Record<string, unknown>;
  const created = event.created;
  if (typeof created !== 'number') throw new MalformedEventError('The event has no numeric "created" timestamp.', { source: source });
  const data = event.data as { object?: unknown } | undefined;
  return {
    id: requireString(event.id, 'ID ("id")', source),
    type: requireString(event.type, 'type ("type")', source),
    occurredAt: new Date(created * 1000).toISOString(),
    subject: objectId(data?.object),
    payload: event,
  };
}

/** A thin event notification's `object`: Stripe's event destinations send it instead of a snapshot event when asked to. */
const THIN_EVENT = 'v2.core.event';

/** Stripe names thin event types by API version (`v1.customer.updated`, `v2.core.account.updated`). */
export const isThinType = (type: string) => /^v\d+\./.test(type);

/**
 * A thin event notification (https://docs.stripe.com/event-destinations#thin-events), its signature
 * checked by `check` as a snapshot event's is. It names the object that changed and no state of it:
 * its flow's activity parses it with stripe-node and fetches the current object
 * (`fetchRelatedObject`). `created` is a date-time.
 */
function readThinEvent(parsed: Record<string, unknown>, source: string): VerifiedEvent {
  const created = typeof parsed.created === 'string' ? Date.parse(parsed.created) : Number.NaN;
  if (Number.isNaN(created)) throw new MalformedEventError('The event notification has no "created" date-time.', { source: source });
  return {
    id: requireString(parsed.id, 'ID ("id")', source),
    type: requireString(parsed.type, 'type ("type")', source),
    occurredAt: new Date(created).toISOString(),
    subject: objectId(parsed.related_object),
    payload: parsed,
  };
}

/**
 * A sample thin notification of `v1.<object>.<action>` about `payload` (a v1 object): its related
 * object is the payload's ID, at `/v1/<object>s/<id>` (`/v1/customers/cus_…`).
 */
function thinNotification({ id, type, payload, timestamp }: SampleEvent) {
  const object = type.replace(/^v\d+\./, '').replace(/\.[^.]+$/, '');
  const relatedId = typeof payload.id === 'string' ? payload.id : `${object.split('.').at(-1)}_sample`;
  return {
    id,
    object: THIN_EVENT,
    type,
    created: timestamp.toISOString(),
    livemode: false,
    context: null,
    related_object: { id: relatedId, type: object, url: `/v1/${object.replace(/\./g, '/')}s/${relatedId}` },
    reason: null,
  };
}

const outsideTolerance = (source: string) =>
  new SignatureVerificationError(`The Stripe-Signature timestamp is outside the ${TIMESTAMP_TOLERANCE_SECONDS} s tolerance.`, { source: source });

/** The signed `t=` of a header stripe-node accepted, read as stripe-node reads it (the last one, as an integer). */
function signedAt(header: string): number {
  let seconds = Number.NaN;
  for (const item of header.split(',')) {
    const [key, value] = item.split('=');
    if (key === 't') seconds = Number.parseInt(value ?? '', 10);
  }
  return seconds;
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}

export const stripeProvider = defineProvider({
  kind: ProviderKind.STRIPE,
  description: 'Stripe: `Stripe-Signature`, HMAC-SHA256 over `<t>.<body>`, verified by the `stripe` package.',
  builtIn: { name: 'stripe', secretEnv: 'STRIPE_WEBHOOK_SECRET', developmentSecret: 'whsec_durable_webhooks_development_only' },
  create: ({ name, secrets }) => createStripeAdapter({ source: name, secrets }),
  samples: { 'checkout.session.completed': stripeCheckoutCompleted, 'charge.refunded': stripeChargeRefunded, 'customer.updated': stripeCustomerUpdated },
  // One event with its object; Stripe documents no maximum, and its largest objects are far under this.
  maxBodyBytes: 5 * MIB,
  // Stripe publishes the addresses its webhooks come from: https://docs.stripe.com/ips
  publishedAddresses: { url: 'https://stripe.com/files/ips/ips_webhooks.json', urlEnv: 'STRIPE_ADDRESSES_URL', read: (list) => stringsAt(list, 'WEBHOOKS') },
});
