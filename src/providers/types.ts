import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderKind, WebhookEvent } from '../../contracts';

/** A delivery as it reached the receiver, before anything is trusted. */
export interface Delivery {
  rawBody: Buffer;
  /** Header names are lower-case, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** Used for timestamp tolerance; injected so tests can move the clock. */
  receivedAt: Date;
}

/** What an adapter reads from a verified delivery. */
export type VerifiedEvent = Pick<WebhookEvent, 'id' | 'type' | 'occurredAt' | 'subject' | 'bodySha256'> & { payload: unknown };

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
  /** Where the event ID and type are read from, as error messages name them. */
  readonly fields: { readonly id: string; readonly type: string };
  /** Media types this provider sends, lower-case, without parameters. */
  readonly contentTypes: readonly string[];
  /** The headers `verify` reads (lower-case), kept with the stored body so it can be verified again. */
  readonly signatureHeaders: readonly string[];
  verify(delivery: Delivery): VerifiedEvent;
  /** Signs a sample event the way the provider would; used by `durable-webhooks send`. */
  sign(event: SampleEvent): SignedRequest;
}

/** Events older or newer than this many seconds are refused (Stripe's and Standard Webhooks' default). */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;
