import type { Response } from 'express';
import { UnsafeDestinationError } from '../outbound/destination';
import {
  AdminAuthError,
  ApiAuthError,
  IdempotencyConflictError,
  IdempotencyKeyReusedError,
  InvalidRequestError,
  ResourceNotFoundError,
  EventNotFoundError,
  MalformedEventError,
  OperationRejectedError,
  PayloadTooLargeError,
  SignatureVerificationError,
  TemporalUnavailableError,
  UnknownSourceError,
  UnsupportedContentTypeError,
} from '../errors';

/** An RFC 9457 problem document. Never carries a payload, secret or signature. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

/** Seconds a provider should wait before retrying when Temporal is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/** The problem `type` URI for a slug. */
export const problemType = (slug: string) => `urn:durable-webhooks:problem:${slug}`;

/** The one place errors become HTTP status codes. Unknown errors are 500 with no detail. */
export function toProblem(error: unknown): Problem {
  if (error instanceof SignatureVerificationError) {
    return { type: problemType('invalid-signature'), title: 'Signature verification failed', status: 400, detail: error.message, source: error.source };
  }
  if (error instanceof MalformedEventError) {
    return { type: problemType('malformed-event'), title: 'Malformed event', status: 400, detail: error.message, source: error.source };
  }
  if (error instanceof UnknownSourceError) {
    return { type: problemType('unknown-source'), title: 'Unknown webhook source', status: 404, detail: error.message, source: error.source };
  }
  if (error instanceof PayloadTooLargeError) {
    return { type: problemType('payload-too-large'), title: 'Payload too large', status: 413, detail: error.message, maxBodyBytes: error.maxBodyBytes };
  }
  if (error instanceof UnsupportedContentTypeError) {
    return { type: problemType('unsupported-media-type'), title: 'Unsupported content type', status: 415, detail: error.message, accepted: error.accepted };
  }
  if (error instanceof ApiAuthError) {
    return { type: problemType('unauthorized'), title: 'Unauthorized', status: 401, detail: error.message };
  }
  if (error instanceof InvalidRequestError || error instanceof UnsafeDestinationError) {
    return { type: problemType('invalid-request'), title: 'Invalid request', status: 400, detail: error.message };
  }
  if (error instanceof IdempotencyKeyReusedError) {
    return { type: problemType('idempotency-key-reused'), title: 'Idempotency-Key reused', status: 422, detail: error.message };
  }
  if (error instanceof IdempotencyConflictError) {
    return { type: problemType('idempotency-key-in-use'), title: 'Request in progress', status: 409, detail: error.message };
  }
  if (error instanceof ResourceNotFoundError) {
    return { type: problemType(`${error.kind}-not-found`), title: 'Not found', status: 404, detail: error.message };
  }
  if (error instanceof AdminAuthError) {
    return { type: problemType('unauthorized'), title: 'Unauthorized', status: 401, detail: error.message };
  }
  if (error instanceof EventNotFoundError) {
    return { type: problemType('event-not-found'), title: 'Event not found', status: 404, detail: error.message, eventId: error.eventId };
  }
  if (error instanceof OperationRejectedError) {
    return { type: problemType('operation-rejected'), title: 'Operation rejected', status: 400, detail: error.message };
  }
  if (error instanceof TemporalUnavailableError) {
    return { type: problemType('temporal-unavailable'), title: 'Temporal unavailable', status: 503, detail: error.message, eventId: error.eventId };
  }
  if (isClientHttpError(error)) {
    // body-parser's own 4xx (an unsupported Content-Encoding, a truncated body): its message names no content.
    return { type: problemType('bad-request'), title: 'Bad request', status: error.status, detail: error.message };
  }
  return { type: problemType('internal'), title: 'Internal error', status: 500, detail: 'The event was not recorded; retry the delivery.' };
}

export function sendProblem(res: Response, problem: Problem): void {
  if (problem.status === 503) res.set('Retry-After', String(RETRY_AFTER_SECONDS));
  if (problem.status === 401) res.set('WWW-Authenticate', 'Bearer realm="durable-webhooks admin"');
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

function isClientHttpError(error: unknown): error is { status: number; message: string } {
  const { status, expose } = (error ?? {}) as { status?: unknown; expose?: unknown };
  return expose === true && typeof status === 'number' && status >= 400 && status < 500;
}
