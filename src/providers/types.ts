import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderKind, WebhookEvent } from '../../contracts';
import type { ReceivedBody } from '../db/event-bodies';

/** A part of an event's identity that a provider may leave outside its signature. */
export type UnsignedField = 'id' | 'type';

/** A delivery as it reached the receiver, before anything is trusted. */
export interface Delivery {
  rawBody: Buffer;
  /** Header names are lower-case, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** Used for timestamp tolerance; injected so tests can move the clock. */
  receivedAt: Date;
}

/** What an adapter reads from a verified delivery. */
export type VerifiedEvent = Pick<WebhookEvent, 'id' | 'type' | 'occurredAt' | 'subject'> & {
  payload: unknown;
  /** The item's position in a batch, from 0. */
  item?: number;
  /**
   * What the body store keeps for this event when it is not the whole delivery: an item of a batch
   * (SendGrid, Adyen) is stored on its own, in the form `verify` accepts again where its provider
   * signs items one by one.
   */
  body?: Omit<ReceivedBody, 'contentType'> & { contentType: string };
};

/** An item of a batch that failed on its own (its signature, its ID), while the others were recorded. */
export interface RefusedItem {
  /** The item's position in the delivery, from 0. */
  index: number;
  /** Why, in the words a `SignatureVerificationError` or `MalformedEventError` would use. */
  reason: string;
}

/** Everything a delivery carries, verified. */
export interface VerifiedDelivery {
  /** One event for most providers; one per item for batches (SendGrid, Adyen). */
  events: VerifiedEvent[];
  /** Batch items refused on their own; the delivery is then answered 400 and names them. */
  refused?: RefusedItem[];
  /**
   * An answer the provider expects instead of an event, such as Slack's `url_verification`
   * challenge: sent with 200, and nothing is recorded.
   */
  challenge?: { contentType: string; body: string };
}

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

/** What `check` found beyond yes: the items of a batch refused on their own signature (Adyen signs each item). */
export interface Checked {
  refused?: RefusedItem[];
}

/**
 * What one provider kind's file declares: where its identity is, how it checks a signature, how it
 * reads a checked delivery, and how it signs samples. Checking and reading are two functions, as
 * octokit's `verify` and its event parsing are: `check` decides whether the provider sent the bytes,
 * `read` trusts that decision and only reads.
 */
export interface ProviderParts {
  readonly kind: ProviderKind;
  /**
   * Where the event ID and type are read from, as error messages name them, and which of the two
   * the signature does not cover (a header outside the signed bytes). For those the receiver
   * records the body's hash, so the same signed bytes under another ID or type are a replay.
   */
  readonly fields: { readonly id: string; readonly type: string; readonly unsigned?: readonly UnsignedField[] };
  /** Media types this provider sends, lower-case, without parameters. */
  readonly contentTypes: readonly string[];
  /** The headers `check` and `read` use (lower-case), kept with the stored body so it can be verified again. */
  readonly signatureHeaders: readonly string[];
  /** True when one delivery carries many events (SendGrid, Adyen): answered with one entry per item. */
  readonly batch?: boolean;
  /** The body of a 2xx when the provider expects its own (Adyen's `[accepted]`); our JSON otherwise. */
  readonly acknowledgement?: { readonly contentType: string; readonly body: string };
  /**
   * Whether a configured secret or key signed the delivery: a function of its raw bytes, its headers,
   * the time it was received and the secrets, nothing else. Resolves when one did (with the batch
   * items whose own signature failed), rejects with `SignatureVerificationError` saying why not. It
   * parses only what the signature is about (Adyen's items, Linear's signed timestamp).
   */
  check(delivery: Delivery): Promise<Checked>;
  /**
   * The events of a delivery `check` accepted, or its challenge; rejects with `MalformedEventError`
   * what cannot be read. It verifies nothing: never call it on a delivery `check` did not accept.
   */
  read(delivery: Delivery, checked: Checked): VerifiedDelivery;
  /** Signs a sample event the way the provider would; used by `durable-webhooks send`. */
  sign(event: SampleEvent): SignedRequest;
  /** A new event ID in the provider's own shape, for samples. */
  sampleId(): string;
}

/** A provider kind's adapter: its parts, and `verify`, the one way a delivery is taken in. */
export interface ProviderAdapter extends ProviderParts {
  /** `check`, then `read`: nothing is read from a delivery whose signature did not check out. */
  verify(delivery: Delivery): Promise<VerifiedDelivery>;
}

/** The adapter of a kind's parts. */
export function adapter(parts: ProviderParts): ProviderAdapter {
  return {
    ...parts,
    async verify(delivery) {
      return parts.read(delivery, await parts.check(delivery));
    },
  };
}

/** Events older or newer than this many seconds are refused (Stripe's and Standard Webhooks' default). */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;
