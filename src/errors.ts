/**
 * The receiver's failure modes, one class each. They carry identifiers, never payloads, secrets
 * or signature headers, so a logger can print them safely. `src/http/problem.ts` maps them to
 * HTTP status codes in one place.
 */

/** The delivery's signature, timestamp or signing headers do not verify. Maps to 400. */
export class SignatureVerificationError extends Error {
  override readonly name = 'SignatureVerificationError';
  constructor(
    message: string,
    readonly source: string,
  ) {
    super(message);
  }
}

/** The body verified but is not an event we can read (bad JSON, no event ID, no type). Maps to 400. */
export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
  constructor(
    message: string,
    readonly source: string,
  ) {
    super(message);
  }
}

/** The request's Content-Type is not one the source's provider sends. Maps to 415. */
export class UnsupportedContentTypeError extends Error {
  override readonly name = 'UnsupportedContentTypeError';
  constructor(
    readonly source: string,
    readonly contentType: string | undefined,
    readonly accepted: readonly string[],
  ) {
    super(`Content-Type ${contentType ?? '(none)'} is not accepted here; send ${accepted.join(' or ')}.`);
  }
}

/** No source of that name is configured. Maps to 404. */
export class UnknownSourceError extends Error {
  override readonly name = 'UnknownSourceError';
  constructor(readonly source: string) {
    super(`No webhook source named "${source}" is configured.`);
  }
}

/** The body is larger than MAX_BODY_BYTES. Maps to 413. */
export class PayloadTooLargeError extends Error {
  override readonly name = 'PayloadTooLargeError';
  constructor(readonly maxBodyBytes: number) {
    super(`The body is larger than the limit of ${maxBodyBytes} bytes (MAX_BODY_BYTES).`);
  }
}

/** Temporal did not confirm the start in time; the event is not recorded and the provider should retry. Maps to 503. */
export class TemporalUnavailableError extends Error {
  override readonly name = 'TemporalUnavailableError';
  constructor(
    readonly eventId: string,
    options?: { cause?: unknown },
  ) {
    super('Temporal could not be reached in time; the event was not recorded. Retry the delivery.', options);
  }
}

/** The configuration read at start-up is invalid; the process must not start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** No workflow has this event ID in the namespace. Maps to 404 / exit 1. */
export class EventNotFoundError extends Error {
  override readonly name = 'EventNotFoundError';
  constructor(readonly eventId: string) {
    super(`No event ${eventId}: no workflow has that ID in this namespace.`);
  }
}

/** An operator request that cannot be carried out as asked; nothing was changed. Maps to 400 / exit 1. */
export class OperationRejectedError extends Error {
  override readonly name = 'OperationRejectedError';
}

/** `/admin` without the right bearer token. Maps to 401. */
export class AdminAuthError extends Error {
  override readonly name = 'AdminAuthError';
}

/** `/v1` without a valid API token. Maps to 401. */
export class ApiAuthError extends Error {
  override readonly name = 'ApiAuthError';
}

/** A request to our API that is not valid as sent (missing Idempotency-Key, bad fields). Maps to 400. */
export class InvalidRequestError extends Error {
  override readonly name = 'InvalidRequestError';
}

/** The Idempotency-Key was first used with another request body. Maps to 422. */
export class IdempotencyKeyReusedError extends Error {
  override readonly name = 'IdempotencyKeyReusedError';
  constructor(readonly idempotencyKey: string) {
    super(`The Idempotency-Key "${idempotencyKey}" was already used with a different request body; use a new key for a new message.`);
  }
}

/** The first request with this Idempotency-Key is still being recorded. Maps to 409. */
export class IdempotencyConflictError extends Error {
  override readonly name = 'IdempotencyConflictError';
  constructor(readonly idempotencyKey: string) {
    super(`A request with the Idempotency-Key "${idempotencyKey}" is still being processed; retry shortly.`);
  }
}

/** No such endpoint or message for this API token. Maps to 404. */
export class ResourceNotFoundError extends Error {
  override readonly name = 'ResourceNotFoundError';
  constructor(
    readonly kind: 'endpoint' | 'message',
    readonly id: string,
  ) {
    super(`No ${kind} ${id}.`);
  }
}
