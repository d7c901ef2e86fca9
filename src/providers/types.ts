import type { IncomingHttpHeaders } from 'node:http';

/** The three kinds of provider the receiver can verify. */
export const ProviderKind = {
  STRIPE: 'stripe',
  GITHUB: 'github',
  STANDARD_WEBHOOKS: 'standard-webhooks',
} as const;
export type ProviderKind = (typeof ProviderKind)[keyof typeof ProviderKind];

/** One verified delivery, as the event workflow receives it. */
export interface WebhookEvent {
  /** The configured source name, the `:source` of `POST /webhooks/:source`. */
  source: string;
  /** The source's provider kind, which (with the type) picks the workflow. */
  provider: ProviderKind;
  /** The provider's event ID (Stripe `id`, GitHub `X-GitHub-Delivery`, Standard Webhooks `webhook-id`). */
  id: string;
  /** The event type (`checkout.session.completed`, `issues.opened`, `order.created`). */
  type: string;
  /** When the provider says the event happened, ISO 8601; the receipt time when the provider does not say. */
  occurredAt: string;
  /** When the receiver verified the delivery, ISO 8601. */
  receivedAt: string;
  /** The ID of the object the event is about, when the provider names one, for people reading the UI. */
  subject?: string;
  /** The parsed body. */
  payload: unknown;
}

/** A delivery as it reached the receiver, before anything is trusted. */
export interface Delivery {
  rawBody: Buffer;
  /** Header names are lower-case, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** Used for timestamp tolerance; injected so tests can move the clock. */
  receivedAt: Date;
}

/** What an adapter reads from a verified delivery. */
export type VerifiedEvent = Pick<WebhookEvent, 'id' | 'type' | 'occurredAt' | 'subject' | 'payload'>;

/** A signed request ready to send, as the `send` CLI and the examples need it. */
export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

/** An event to sign: the fields every provider needs. */
export interface SampleEvent {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  timestamp: Date;
}

/**
 * Verification and signing for one provider kind. `verify` checks the signature on the raw bytes
 * before parsing anything, and throws `SignatureVerificationError`, `MalformedEventError` or
 * `UnsupportedContentTypeError`.
 */
export interface ProviderAdapter {
  readonly kind: ProviderKind;
  /** Media types this provider sends, lower-case, without parameters. */
  readonly contentTypes: readonly string[];
  verify(delivery: Delivery): VerifiedEvent;
  /** Signs a sample event the way the provider would; used by `durable-webhooks send`. */
  sign(event: SampleEvent): SignedRequest;
}

/** Events older or newer than this many seconds are refused (Stripe's and Standard Webhooks' default). */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;
