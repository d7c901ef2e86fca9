/**
 * The failure modes, one class each. They carry identifiers, never payloads, secrets or signature
 * headers, so a logger can print them safely. Each one that reaches HTTP extends `ProblemError` and
 * states its status once, on the class; `src/http/problem.ts` turns any of them into a problem
 * document.
 */

/** An error an HTTP route answers with a problem document (RFC 9457): its status, type slug and title. */
export abstract class ProblemError extends Error {
  abstract readonly status: number;
  /** The last part of the problem `type` URI. */
  abstract readonly slug: string;
  abstract readonly title: string;
  /** Extra members of the problem document: identifiers only. */
  get extensions(): Record<string, unknown> {
    return {};
  }
}

/** The delivery's signature, timestamp or signing headers do not verify. */
export class SignatureVerificationError extends ProblemError {
  override readonly name = 'SignatureVerificationError';
  readonly status = 400;
  readonly slug = 'invalid-signature';
  readonly title = 'Signature verification failed';
  constructor(
    message: string,
    readonly source: string,
  ) {
    super(message);
  }
  override get extensions() {
    return { source: this.source };
  }
}

/** The body verified but is not an event we can read (bad JSON, no event ID, no type). */
export class MalformedEventError extends ProblemError {
  override readonly name = 'MalformedEventError';
  readonly status = 400;
  readonly slug = 'malformed-event';
  readonly title = 'Malformed event';
  constructor(
    message: string,
    readonly source: string,
  ) {
    super(message);
  }
  override get extensions() {
    return { source: this.source };
  }
}

/** The request's Content-Type is not one the source's provider sends. */
export class UnsupportedContentTypeError extends ProblemError {
  override readonly name = 'UnsupportedContentTypeError';
  readonly status = 415;
  readonly slug = 'unsupported-media-type';
  readonly title = 'Unsupported content type';
  constructor(
    readonly source: string,
    readonly contentType: string | undefined,
    readonly accepted: readonly string[],
  ) {
    super(`Content-Type ${contentType ?? '(none)'} is not accepted here; send ${accepted.join(' or ')}.`);
  }
  override get extensions() {
    return { accepted: this.accepted };
  }
}

/**
 * The body is compressed (`Content-Encoding` other than `identity`). No supported provider compresses
 * its webhooks, and inflating before the signature is checked would let a small body of zeros take
 * megabytes of memory: refused before the body is read.
 */
export class UnsupportedContentEncodingError extends ProblemError {
  override readonly name = 'UnsupportedContentEncodingError';
  readonly status = 415;
  readonly slug = 'unsupported-content-encoding';
  readonly title = 'Unsupported content encoding';
  constructor(readonly contentEncoding: string) {
    super(`Content-Encoding ${contentEncoding} is not accepted; send the body uncompressed (identity).`);
  }
  override get extensions() {
    return { accepted: ['identity'] };
  }
}

/** No source of that name is configured. */
export class UnknownSourceError extends ProblemError {
  override readonly name = 'UnknownSourceError';
  readonly status = 404;
  readonly slug = 'unknown-source';
  readonly title = 'Unknown webhook source';
  constructor(readonly source: string) {
    super(`No webhook source named "${source}" is configured.`);
  }
  override get extensions() {
    return { source: this.source };
  }
}

/** The body is larger than the route's limit (MAX_BODY_BYTES for webhooks). */
export class PayloadTooLargeError extends ProblemError {
  override readonly name = 'PayloadTooLargeError';
  readonly status = 413;
  readonly slug = 'payload-too-large';
  readonly title = 'Payload too large';
  constructor(readonly maxBodyBytes: number) {
    super(`The body is larger than the limit of ${maxBodyBytes} bytes.`);
  }
  override get extensions() {
    return { maxBodyBytes: this.maxBodyBytes };
  }
}

/**
 * A dependency of the event's start did not confirm in time: nothing was started, the delivery is
 * answered 503 with Retry-After, and the provider's retry will be recorded.
 */
export abstract class EventNotRecordedError extends ProblemError {
  readonly status = 503;
  constructor(
    readonly eventId: string,
    what: string,
    options?: { cause?: unknown },
  ) {
    super(`${what}; the event was not recorded. Retry the delivery.`, options);
  }
  override get extensions() {
    return { eventId: this.eventId };
  }
}

/** Temporal did not confirm the start in time. */
export class TemporalUnavailableError extends EventNotRecordedError {
  override readonly name = 'TemporalUnavailableError';
  readonly slug = 'temporal-unavailable';
  readonly title = 'Temporal unavailable';
  constructor(eventId: string, options?: { cause?: unknown }) {
    super(eventId, 'Temporal could not be reached in time', options);
  }
}

/** The body store (the database) did not take the body, so the event was not started. */
export class BodyStoreUnavailableError extends EventNotRecordedError {
  override readonly name = 'BodyStoreUnavailableError';
  readonly slug = 'body-store-unavailable';
  readonly title = 'Body store unavailable';
  constructor(eventId: string, options?: { cause?: unknown }) {
    super(eventId, 'The database could not store the body', options);
  }
}

/**
 * The event's workflow ID is already another source's event (built-in sources share one ID space):
 * not a duplicate, so it is refused, never answered 200 and dropped; the provider retries it.
 */
export class EventIdConflictError extends ProblemError {
  override readonly name = 'EventIdConflictError';
  readonly status = 409;
  readonly slug = 'event-id-conflict';
  readonly title = 'Event ID recorded for another source';
  constructor(
    readonly source: string,
    readonly eventId: string,
    readonly otherSource: string,
  ) {
    super(`The event ID ${eventId} is already recorded for the source "${otherSource}", and the two share workflow IDs; give one of them a "workflowIdPrefix" in WEBHOOKS_CONFIG, then let the provider retry.`);
  }
  override get extensions() {
    return { source: this.source, eventId: this.eventId, otherSource: this.otherSource };
  }
}

/** What a batch answer says of each item it recorded. */
export interface RecordedItem {
  eventId: string;
  workflowId: string;
  status: 'started' | 'accepted' | 'duplicate';
}

/** Items of a batch failed on their own (a signature, an ID); the others were recorded, and the answer names both. */
export class BatchItemsRefusedError extends ProblemError {
  override readonly name = 'BatchItemsRefusedError';
  readonly status = 400;
  readonly slug = 'invalid-items';
  readonly title = 'Some items of the batch were refused';
  constructor(
    readonly source: string,
    readonly recorded: readonly RecordedItem[],
    readonly refused: ReadonlyArray<{ index: number; reason: string }>,
  ) {
    super(
      `${refused.length} item(s) of the batch were refused (see "refused"${refused.length > MAX_LISTED_REFUSALS ? `, the first ${MAX_LISTED_REFUSALS}` : ''}); the ${recorded.length} other(s) are recorded and a redelivery will find them as duplicates.`,
    );
  }
  /** The answer names at most `MAX_LISTED_REFUSALS` refused items, and counts them all, so its size stays bounded. */
  override get extensions() {
    return { source: this.source, recorded: this.recorded, refusedCount: this.refused.length, refused: this.refused.slice(0, MAX_LISTED_REFUSALS) };
  }
}

/** Refused items of a batch its 400 answer lists by index and reason; the rest are counted. */
export const MAX_LISTED_REFUSALS = 20;

/** Some items of a batch could not be recorded (Temporal or the database did not confirm); a redelivery records only those. */
export class BatchNotRecordedError extends ProblemError {
  override readonly name = 'BatchNotRecordedError';
  readonly status = 503;
  readonly slug = 'batch-not-recorded';
  readonly title = 'Some items of the batch were not recorded';
  constructor(
    readonly recorded: readonly RecordedItem[],
    readonly notRecorded: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(`${notRecorded.length} item(s) of the batch were not recorded; retry the delivery: the ${recorded.length} recorded one(s) will be duplicates.`, options);
  }
  override get extensions() {
    return { recorded: this.recorded, notRecorded: this.notRecorded };
  }
}

/** As many large bodies as memory allows are being received; this one is refused unread, for a retry. */
export class TooManyLargeBodiesError extends ProblemError {
  override readonly name = 'TooManyLargeBodiesError';
  readonly status = 503;
  readonly slug = 'too-many-large-bodies';
  readonly title = 'Too many large bodies in flight';
  constructor(readonly limit: number) {
    super(`${limit} large bodies are being received (MAX_LARGE_BODIES_IN_FLIGHT); the event was not recorded. Retry the delivery.`);
  }
  override get extensions() {
    return { limit: this.limit };
  }
}

/** One client address already sends its share of the large bodies; this one is refused unread. */
export class TooManyLargeBodiesFromAddressError extends ProblemError {
  override readonly name = 'TooManyLargeBodiesFromAddressError';
  readonly status = 429;
  readonly slug = 'too-many-large-bodies-from-address';
  readonly title = 'Too many large bodies from this address';
  constructor(readonly limit: number) {
    super(`This address is sending ${limit} large bodies already (MAX_LARGE_BODIES_PER_ADDRESS); the event was not recorded. Retry the delivery.`);
  }
  override get extensions() {
    return { limit: this.limit };
  }
}

/** The body arrived too slowly to finish in time; the connection is closed. */
export class BodyTooSlowError extends ProblemError {
  override readonly name = 'BodyTooSlowError';
  readonly status = 408;
  readonly slug = 'body-too-slow';
  readonly title = 'Body too slow';
  constructor(readonly received: number, readonly seconds: number) {
    super(`${received} bytes of the body arrived in ${seconds} s, too slowly to finish within REQUEST_TIMEOUT (MIN_BODY_RATE); the event was not recorded.`);
  }
}

/** The configuration read at start-up is invalid; the process must not start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** No workflow has this event ID in the namespace. Exit 1 in the CLI. */
export class EventNotFoundError extends ProblemError {
  override readonly name = 'EventNotFoundError';
  readonly status = 404;
  readonly slug = 'event-not-found';
  readonly title = 'Event not found';
  constructor(
    readonly eventId: string,
    why = 'no workflow has that ID in this namespace',
  ) {
    super(`No event ${eventId}: ${why}.`);
  }
  override get extensions() {
    return { eventId: this.eventId };
  }
}

/** An operator request that cannot be carried out as asked; nothing was changed. Exit 1 in the CLI. */
export class OperationRejectedError extends ProblemError {
  override readonly name = 'OperationRejectedError';
  readonly status = 400;
  readonly slug = 'operation-rejected';
  readonly title = 'Operation rejected';
}

/** The operation needs the event's workflow to be closed; nothing was changed. */
export class EventRunningError extends ProblemError {
  override readonly name = 'EventRunningError';
  readonly status = 409;
  readonly slug = 'event-running';
  readonly title = 'Event still running';
}

/** A backfill of this source is running; nothing was started. */
export class BackfillRunningError extends ProblemError {
  override readonly name = 'BackfillRunningError';
  readonly status = 409;
  readonly slug = 'backfill-running';
  readonly title = 'Backfill running';
}

/** The message's deliveries still run, and would need its payload; nothing was changed. */
export class MessageDeliveringError extends ProblemError {
  override readonly name = 'MessageDeliveringError';
  readonly status = 409;
  readonly slug = 'message-delivering';
  readonly title = 'Message still delivering';
}

/** A signal the workflow takes only while it waits for it, sent when it does not; nothing was sent. */
export class SignalNotAwaitedError extends ProblemError {
  override readonly name = 'SignalNotAwaitedError';
  readonly status = 409;
  readonly slug = 'signal-not-awaited';
  readonly title = 'Signal not awaited';
}

/** `/admin` without the right bearer token. */
export class AdminAuthError extends ProblemError {
  override readonly name = 'AdminAuthError';
  readonly status = 401;
  readonly slug = 'unauthorized';
  readonly title = 'Unauthorized';
}

/** Too many refused bearer tokens from one address; nothing was checked. */
export class TooManyFailedAttemptsError extends ProblemError {
  override readonly name = 'TooManyFailedAttemptsError';
  readonly status = 429;
  readonly slug = 'too-many-failed-attempts';
  readonly title = 'Too many failed attempts';
  constructor(readonly limit: number) {
    super(`More than ${limit} refused tokens from this address within a minute; wait, then send the right one.`);
  }
}

/** `/v1` without a valid API token. */
export class ApiAuthError extends ProblemError {
  override readonly name = 'ApiAuthError';
  readonly status = 401;
  readonly slug = 'unauthorized';
  readonly title = 'Unauthorized';
}

/** A request to our API that is not valid as sent (missing Idempotency-Key, bad fields). */
export class InvalidRequestError extends ProblemError {
  override readonly name: string = 'InvalidRequestError';
  readonly status = 400;
  readonly slug = 'invalid-request';
  readonly title = 'Invalid request';
}

/** The Idempotency-Key was first used with another request body. */
export class IdempotencyKeyReusedError extends ProblemError {
  override readonly name = 'IdempotencyKeyReusedError';
  readonly status = 422;
  readonly slug = 'idempotency-key-reused';
  readonly title = 'Idempotency-Key reused';
  constructor(readonly idempotencyKey: string) {
    super(`The Idempotency-Key "${idempotencyKey}" was already used with a different request body; use a new key for a new message.`);
  }
}

/** The first request with this Idempotency-Key is still being recorded, or failed before it was: retry. */
export class IdempotencyConflictError extends ProblemError {
  override readonly name = 'IdempotencyConflictError';
  readonly status = 409;
  readonly slug = 'idempotency-key-in-use';
  readonly title = 'Request in progress';
  constructor(
    readonly idempotencyKey: string,
    firstFailed = false,
  ) {
    super(
      firstFailed
        ? `The first request with the Idempotency-Key "${idempotencyKey}" failed before it was recorded; retry this one.`
        : `A request with the Idempotency-Key "${idempotencyKey}" is still being processed; retry shortly.`,
    );
  }
}

/** A message that could not be delivered as asked, refused before anything is recorded. */
export class UndeliverableMessageError extends ProblemError {
  override readonly name = 'UndeliverableMessageError';
  readonly status = 422;
  readonly slug = 'undeliverable-message';
  readonly title = 'Message cannot be delivered';
}

/** A provider's API (Stripe's events, GitHub's deliveries) refused or failed a backfill's call. */
export class ProviderApiError extends ProblemError {
  override readonly name = 'ProviderApiError';
  readonly status = 502;
  readonly slug = 'provider-api-error';
  readonly title = "The provider's API failed";
}

/** No such endpoint or message for this API token. */
export class ResourceNotFoundError extends ProblemError {
  override readonly name = 'ResourceNotFoundError';
  readonly status = 404;
  readonly title = 'Not found';
  constructor(
    readonly kind: 'endpoint' | 'message' | 'backfill',
    readonly id: string,
  ) {
    super(`No ${kind} ${id}.`);
  }
  get slug() {
    return `${this.kind}-not-found`;
  }
}

/**
 * An error's message and its causes' after it (`Failed to describe workflow: 14 UNAVAILABLE: … handshake
 * failed`), each once, on one line: the reason a process stops, where the first message alone
 * would hide it (a refused TLS certificate, an unreachable server).
 */
export function messageWithCauses(error: unknown): string {
  const messages: string[] = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const message = (current instanceof Error ? current.message : String(current)).replace(/\s+/g, ' ').trim();
    if (message && !messages.some((seen) => seen.includes(message))) messages.push(message);
  }
  return messages.join(': ');
}
