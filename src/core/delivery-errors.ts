import { ProblemError, problem } from './errors';

/**
 * How a webhook delivery is refused or not recorded, one problem each: the receiver's answers to
 * providers (src/http/webhooks.ts and its body guards), declared with `problem` (./errors.ts).
 */

/** The delivery's signature, timestamp or signing headers do not verify. */
export class SignatureVerificationError extends problem<{ source: string }>(400, 'invalid-signature', 'Signature verification failed', ['source']) {}

/** The body verified but is not an event we can read (bad JSON, no event ID, no type). */
export class MalformedEventError extends problem<{ source: string }>(400, 'malformed-event', 'Malformed event', ['source']) {}

/** The request's Content-Type is not one the source's provider sends. */
export class UnsupportedContentTypeError extends problem(
  415,
  'unsupported-media-type',
  'Unsupported content type',
  ['accepted'],
  ({ contentType, accepted }: { source: string; contentType: string | undefined; accepted: readonly string[] }) =>
    `Content-Type ${contentType ?? '(none)'} is not accepted here; send ${accepted.join(' or ')}.`,
) {}

/**
 * The body is compressed (`Content-Encoding` other than `identity`). No supported provider compresses
 * its webhooks, and inflating before the signature is checked would let a small body of zeros take
 * megabytes of memory: refused before the body is read.
 */
export class UnsupportedContentEncodingError extends problem(
  415,
  'unsupported-content-encoding',
  'Unsupported content encoding',
  () => ({ accepted: ['identity'] }),
  ({ contentEncoding }: { contentEncoding: string }) => `Content-Encoding ${contentEncoding} is not accepted; send the body uncompressed (identity).`,
) {}

/** No source of that name is configured. */
export class UnknownSourceError extends problem(
  404,
  'unknown-source',
  'Unknown webhook source',
  ['source'],
  ({ source }: { source: string }) => `No webhook source named "${source}" is configured.`,
) {}

/** The body is larger than the route's limit (for webhooks, its source's, under MAX_BODY_BYTES). */
export class PayloadTooLargeError extends problem(
  413,
  'payload-too-large',
  'Payload too large',
  ['maxBodyBytes'],
  ({ maxBodyBytes }: { maxBodyBytes: number }) => `The body is larger than the limit of ${maxBodyBytes} bytes.`,
) {}

/**
 * A dependency of the event's start did not confirm in time: nothing was started, the delivery is
 * answered 503 with Retry-After, and the provider's retry will be recorded.
 */
export abstract class EventNotRecordedError extends ProblemError {}
const notRecorded = (what: string) => () => `${what}; the event was not recorded. Retry the delivery.`;

/** Temporal did not confirm the start in time. */
export class TemporalUnavailableError extends problem<{ eventId: string }>(
  503,
  'temporal-unavailable',
  'Temporal unavailable',
  ['eventId'],
  notRecorded('Temporal could not be reached in time'),
  EventNotRecordedError,
) {}

/** The body store (the database) did not take the body, so the event was not started. */
export class BodyStoreUnavailableError extends problem<{ eventId: string }>(
  503,
  'body-store-unavailable',
  'Body store unavailable',
  ['eventId'],
  notRecorded('The database could not store the body'),
  EventNotRecordedError,
) {}

/**
 * The event's workflow ID is already another source's event (built-in sources share one ID space):
 * not a duplicate, so it is refused, never answered 200 and dropped; the provider retries it.
 */
export class EventIdConflictError extends problem(
  409,
  'event-id-conflict',
  'Event ID recorded for another source',
  ['source', 'eventId', 'otherSource'],
  ({ eventId, otherSource }: { source: string; eventId: string; otherSource: string }) =>
    `The event ID ${eventId} is already recorded for the source "${otherSource}", and the two share workflow IDs; give one of them a "workflowIdPrefix" in WEBHOOKS_CONFIG, then let the provider retry.`,
) {}

/** What a batch answer says of each item it recorded. */
export interface RecordedItem {
  eventId: string;
  workflowId: string;
  status: 'started' | 'accepted' | 'held' | 'ignored' | 'filtered' | 'duplicate';
}

/** Refused items of a batch its 400 answer lists by index and reason; the rest are counted. */
export const MAX_LISTED_REFUSALS = 20;

type Refused = { source: string; recorded: readonly RecordedItem[]; refused: ReadonlyArray<{ index: number; reason: string }> };

/**
 * Items of a batch failed on their own (a signature, an ID); the others were recorded, and the answer
 * names both: the refused items by index, at most `MAX_LISTED_REFUSALS` of them, and their count, so
 * its size stays bounded.
 */
export class BatchItemsRefusedError extends problem(
  400,
  'invalid-items',
  'Some items of the batch were refused',
  ({ source, recorded, refused }: Refused) => ({
    source,
    recorded,
    refusedCount: refused.length,
    refused: [...refused].sort((a, b) => a.index - b.index).slice(0, MAX_LISTED_REFUSALS),
  }),
  ({ recorded, refused }: Refused) =>
    `${refused.length} item(s) of the batch were refused (see "refused"${refused.length > MAX_LISTED_REFUSALS ? `, the first ${MAX_LISTED_REFUSALS}` : ''}); the ${recorded.length} other(s) are recorded and a redelivery will find them as duplicates.`,
) {}

/** Some items of a batch could not be recorded (Temporal or the database did not confirm); a redelivery records only those. */
export class BatchNotRecordedError extends problem(
  503,
  'batch-not-recorded',
  'Some items of the batch were not recorded',
  ['recorded', 'notRecorded'],
  ({ recorded, notRecorded }: { recorded: readonly RecordedItem[]; notRecorded: readonly string[] }) =>
    `${notRecorded.length} item(s) of the batch were not recorded; retry the delivery: the ${recorded.length} recorded one(s) will be duplicates.`,
) {}

/** As many large bodies as memory allows are being received; this one is refused unread, for a retry. */
export class TooManyLargeBodiesError extends problem(
  503,
  'too-many-large-bodies',
  'Too many large bodies in flight',
  ['limit'],
  ({ limit }: { limit: number }) => `${limit} large bodies are being received (MAX_LARGE_BODIES_IN_FLIGHT); the event was not recorded. Retry the delivery.`,
) {}

/** The source keeps to its provider's published addresses (ADDRESS_ALLOWLISTS, enforce), and this one is not among them. */
export class AddressNotAllowedError extends problem(
  403,
  'address-not-allowed',
  'Address not allowed',
  ['source'],
  ({ source }: { source: string }) => `Source "${source}" accepts deliveries only from the addresses its provider publishes.`,
) {}

/** The source keeps to its provider's published addresses, and no list of them could be read yet: retried, nothing is lost. */
export class AddressListUnavailableError extends problem(
  503,
  'address-list-unavailable',
  'Address list unavailable',
  ['source'],
  ({ source }: { source: string }) =>
    `Source "${source}" accepts deliveries only from its provider's published addresses, and their list could not be read yet; the event was not recorded. Retry the delivery.`,
) {}

/** One client address already sends its share of the large bodies; this one is refused unread. */
export class TooManyLargeBodiesFromAddressError extends problem(
  429,
  'too-many-large-bodies-from-address',
  'Too many large bodies from this address',
  ['limit'],
  ({ limit }: { limit: number }) =>
    `This address is sending ${limit} large bodies already (MAX_LARGE_BODIES_PER_ADDRESS); the event was not recorded. Retry the delivery.`,
) {}

/** The body arrived too slowly to finish in time; the connection is closed. */
export class BodyTooSlowError extends problem(
  408,
  'body-too-slow',
  'Body too slow',
  [],
  ({ received, seconds }: { received: number; seconds: number }) =>
    `${received} bytes of the body arrived in ${seconds} s, too slowly to finish within REQUEST_TIMEOUT (MIN_BODY_RATE); the event was not recorded.`,
) {}
