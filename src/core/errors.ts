/**
 * The failure modes, one class each, all here. They carry identifiers, never payloads, secrets or
 * signature headers, so a logger can print them safely. Each one that reaches HTTP extends
 * `problem(status, slug, title)` (or `ProblemError`, where its slug depends on the instance): one
 * line states what it answers, and `src/http/problem.ts` turns any of them into a problem document.
 */

/** An error an HTTP route answers with a problem document (RFC 9457): its status, type slug and title. */
export abstract class ProblemError extends Error {
  abstract readonly status: number;
  /** The last part of the problem `type` URI. */
  abstract readonly slug: string;
  abstract readonly title: string;
  constructor(message?: string, options?: { cause?: unknown }) {
    super(message, options);
    // The class's own name, as the logs and the CLI print it: `SignatureVerificationError: …`.
    this.name = new.target.name;
  }
  /** Extra members of the problem document: identifiers only. */
  get extensions(): Record<string, unknown> {
    return {};
  }
}

/** The base of a problem with a fixed status, type slug and title: `class X extends problem(409, 'x', 'X') {}`. */
export function problem(status: number, slug: string, title: string) {
  abstract class Problem extends ProblemError {
    readonly status = status;
    readonly slug = slug;
    readonly title = title;
  }
  return Problem;
}

/** The delivery's signature, timestamp or signing headers do not verify. */
export class SignatureVerificationError extends problem(400, 'invalid-signature', 'Signature verification failed') {
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
export class MalformedEventError extends problem(400, 'malformed-event', 'Malformed event') {
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
export class UnsupportedContentTypeError extends problem(415, 'unsupported-media-type', 'Unsupported content type') {
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
export class UnsupportedContentEncodingError extends problem(415, 'unsupported-content-encoding', 'Unsupported content encoding') {
  constructor(readonly contentEncoding: string) {
    super(`Content-Encoding ${contentEncoding} is not accepted; send the body uncompressed (identity).`);
  }
  override get extensions() {
    return { accepted: ['identity'] };
  }
}

/** No source of that name is configured. */
export class UnknownSourceError extends problem(404, 'unknown-source', 'Unknown webhook source') {
  constructor(readonly source: string) {
    super(`No webhook source named "${source}" is configured.`);
  }
  override get extensions() {
    return { source: this.source };
  }
}

/** The body is larger than the route's limit (for webhooks, its source's, under MAX_BODY_BYTES). */
export class PayloadTooLargeError extends problem(413, 'payload-too-large', 'Payload too large') {
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
  readonly slug = 'temporal-unavailable';
  readonly title = 'Temporal unavailable';
  constructor(eventId: string, options?: { cause?: unknown }) {
    super(eventId, 'Temporal could not be reached in time', options);
  }
}

/** The body store (the database) did not take the body, so the event was not started. */
export class BodyStoreUnavailableError extends EventNotRecordedError {
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
export class EventIdConflictError extends problem(409, 'event-id-conflict', 'Event ID recorded for another source') {
  constructor(
    readonly source: string,
    readonly eventId: string,
    readonly otherSource: string,
  ) {
    super(
      `The event ID ${eventId} is already recorded for the source "${otherSource}", and the two share workflow IDs; give one of them a "workflowIdPrefix" in WEBHOOKS_CONFIG, then let the provider retry.`,
    );
  }
  override get extensions() {
    return { source: this.source, eventId: this.eventId, otherSource: this.otherSource };
  }
}

/** What a batch answer says of each item it recorded. */
export interface RecordedItem {
  eventId: string;
  workflowId: string;
  status: 'started' | 'accepted' | 'held' | 'ignored' | 'duplicate';
}

/** Items of a batch failed on their own (a signature, an ID); the others were recorded, and the answer names both. */
export class BatchItemsRefusedError extends problem(400, 'invalid-items', 'Some items of the batch were refused') {
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
export class BatchNotRecordedError extends problem(503, 'batch-not-recorded', 'Some items of the batch were not recorded') {
  constructor(
    readonly recorded: readonly RecordedItem[],
    readonly notRecorded: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      `${notRecorded.length} item(s) of the batch were not recorded; retry the delivery: the ${recorded.length} recorded one(s) will be duplicates.`,
      options,
    );
  }
  override get extensions() {
    return { recorded: this.recorded, notRecorded: this.notRecorded };
  }
}

/** As many large bodies as memory allows are being received; this one is refused unread, for a retry. */
export class TooManyLargeBodiesError extends problem(503, 'too-many-large-bodies', 'Too many large bodies in flight') {
  constructor(readonly limit: number) {
    super(`${limit} large bodies are being received (MAX_LARGE_BODIES_IN_FLIGHT); the event was not recorded. Retry the delivery.`);
  }
  override get extensions() {
    return { limit: this.limit };
  }
}

/** The source keeps to its provider's published addresses (ADDRESS_ALLOWLISTS, enforce), and this one is not among them. */
export class AddressNotAllowedError extends problem(403, 'address-not-allowed', 'Address not allowed') {
  constructor(readonly source: string) {
    super(`Source "${source}" accepts deliveries only from the addresses its provider publishes.`);
  }
  override get extensions() {
    return { source: this.source };
  }
}

/** The source keeps to its provider's published addresses, and no list of them could be read yet: retried, nothing is lost. */
export class AddressListUnavailableError extends problem(503, 'address-list-unavailable', 'Address list unavailable') {
  constructor(readonly source: string) {
    super(
      `Source "${source}" accepts deliveries only from its provider's published addresses, and their list could not be read yet; the event was not recorded. Retry the delivery.`,
    );
  }
  override get extensions() {
    return { source: this.source };
  }
}

/** One client address already sends its share of the large bodies; this one is refused unread. */
export class TooManyLargeBodiesFromAddressError extends problem(429, 'too-many-large-bodies-from-address', 'Too many large bodies from this address') {
  constructor(readonly limit: number) {
    super(`This address is sending ${limit} large bodies already (MAX_LARGE_BODIES_PER_ADDRESS); the event was not recorded. Retry the delivery.`);
  }
  override get extensions() {
    return { limit: this.limit };
  }
}

/** The body arrived too slowly to finish in time; the connection is closed. */
export class BodyTooSlowError extends problem(408, 'body-too-slow', 'Body too slow') {
  constructor(
    readonly received: number,
    readonly seconds: number,
  ) {
    super(`${received} bytes of the body arrived in ${seconds} s, too slowly to finish within REQUEST_TIMEOUT (MIN_BODY_RATE); the event was not recorded.`);
  }
}

/** The configuration read at start-up is invalid; the process must not start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** No active hold matches what a release names. */
export class HoldNotFoundError extends problem(404, 'hold-not-found', 'No such hold') {}

/** No workflow has this event ID in the namespace. Exit 1 in the CLI. */
export class EventNotFoundError extends problem(404, 'event-not-found', 'Event not found') {
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
export class OperationRejectedError extends problem(400, 'operation-rejected', 'Operation rejected') {}

/** The operation needs the event's workflow to be closed; nothing was changed. */
export class EventRunningError extends problem(409, 'event-running', 'Event still running') {}

/** A backfill of this source is running; nothing was started. */
export class BackfillRunningError extends problem(409, 'backfill-running', 'Backfill running') {}

/** The message's deliveries still run, and would need its payload; nothing was changed. */
export class MessageDeliveringError extends problem(409, 'message-delivering', 'Message still delivering') {}

/** A signal the workflow takes only while it waits for it, sent when it does not; nothing was sent. */
export class SignalNotAwaitedError extends problem(409, 'signal-not-awaited', 'Signal not awaited') {}

/** `/admin` without the right bearer token. */
export class AdminAuthError extends problem(401, 'unauthorized', 'Unauthorized') {}

/** A console request its session may not make: a viewer acting, a form without its CSRF token, a request from another site. */
export class ConsoleForbiddenError extends problem(403, 'forbidden', 'Forbidden') {}

/** Too many refused bearer tokens from one address; nothing was checked. */
export class TooManyFailedAttemptsError extends problem(429, 'too-many-failed-attempts', 'Too many failed attempts') {
  constructor(readonly limit: number) {
    super(`More than ${limit} refused tokens from this address within a minute; wait, then send the right one.`);
  }
}

/** `/v1` without a valid API token. */
export class ApiAuthError extends problem(401, 'unauthorized', 'Unauthorized') {}

/** A request to our API that is not valid as sent (missing Idempotency-Key, bad fields). */
export class InvalidRequestError extends problem(400, 'invalid-request', 'Invalid request') {}

/** The Idempotency-Key was first used with another request body. */
export class IdempotencyKeyReusedError extends problem(422, 'idempotency-key-reused', 'Idempotency-Key reused') {
  constructor(readonly idempotencyKey: string) {
    super(`The Idempotency-Key "${idempotencyKey}" was already used with a different request body; use a new key for a new message.`);
  }
}

/** The first request with this Idempotency-Key is still being recorded, or failed before it was: retry. */
export class IdempotencyConflictError extends problem(409, 'idempotency-key-in-use', 'Request in progress') {
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
export class UndeliverableMessageError extends problem(422, 'undeliverable-message', 'Message cannot be delivered') {}

/** A provider's API (Stripe's events, GitHub's deliveries) refused or failed a backfill's call. */
export class ProviderApiError extends problem(502, 'provider-api-error', "The provider's API failed") {}

/** No such endpoint or message for this API token. */
export class ResourceNotFoundError extends ProblemError {
  readonly status = 404;
  readonly title = 'Not found';
  constructor(
    readonly kind: 'endpoint' | 'message' | 'backfill' | 'job' | 'failure group' | 'console action',
    readonly id: string,
  ) {
    super(`No ${kind} ${id}.`);
  }
  get slug() {
    return `${this.kind.replace(/ /g, '-')}-not-found`;
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

/** An endpoint URL we refuse to call: not http(s), or resolving to a private or special address. */
export class UnsafeDestinationError extends InvalidRequestError {}

/** A failure the email provider says will not succeed on retry (a bad address, a rejected key). */
export class PermanentEmailError extends Error {
  override readonly name = 'PermanentEmailError';
}

/** PostgreSQL does not answer at the URL; the message says what to start. */
export class PostgresUnreachableError extends ConfigError {
  constructor(dbUrl: string, reason: string) {
    const url = new URL(dbUrl);
    const where = `${url.hostname}:${url.port || 5432}`;
    super(
      `PostgreSQL does not answer at ${where} (TEMPORAL_DB_URL): ${reason}. Start one whose user "${decodeURIComponent(url.username)}" may create databases, ` +
        `for example \`docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_USER=temporal -e POSTGRES_PASSWORD=temporal postgres:16\`, or set TEMPORAL_DB_URL to yours.`,
    );
  }
}
