import { errorLine } from '../core/redact';
import type { ErrorRequestHandler, Response } from 'express';
import { ProblemError } from '../core/errors';
import { PayloadTooLargeError, UnsupportedContentEncodingError } from '../core/delivery-errors';
import type { Logger } from '../core/logger';

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

/**
 * The one place errors become problem documents: each `ProblemError` carries its own status.
 * Unknown errors are 500 with `internalDetail`, which each route family words for its callers.
 */
export function toProblem(error: unknown, internalDetail = 'The request failed on our side; retry it.'): Problem {
  // body-parser reports a body over its limit as an http-error of this type, with the limit on it,
  // and a compressed body (it never inflates here: `inflate: false`) as another.
  const { type, limit, encoding } = (error ?? {}) as { type?: unknown; limit?: unknown; encoding?: unknown };
  if (type === 'entity.too.large' && typeof limit === 'number') error = new PayloadTooLargeError({ maxBodyBytes: limit });
  if (type === 'encoding.unsupported') error = new UnsupportedContentEncodingError({ contentEncoding: String(encoding).slice(0, 100) });
  if (error instanceof ProblemError) {
    return { type: problemType(error.slug), title: error.title, status: error.status, detail: error.message, ...error.extensions };
  }
  if (isClientHttpError(error)) {
    // body-parser's own 4xx (an unsupported Content-Encoding, a truncated body): its message names no content.
    return { type: problemType('bad-request'), title: 'Bad request', status: error.status, detail: error.message };
  }
  return { type: problemType('internal'), title: 'Internal error', status: 500, detail: internalDetail };
}

/** Sends a problem; `realm` names the bearer-token realm a 401 asks for. */
export function sendProblem(res: Response, problem: Problem, realm?: string): void {
  if (problem.status === 503 || problem.status === 429) res.set('Retry-After', String(RETRY_AFTER_SECONDS));
  if (problem.status === 401 && realm) res.set('WWW-Authenticate', `Bearer realm="${realm}"`);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

/**
 * The error handler of one route family (`/admin`, `/v1`): its own realm, its own wording for a
 * 500, and its own log lines, so none of them is counted or worded as a webhook delivery.
 */
export function routeErrorHandler(options: { realm: string; internalDetail: string; logger: Logger; what: string }): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const problem = toProblem(error, options.internalDetail);
    if (problem.status >= 500) {
      options.logger.error({ path: req.path, status: problem.status, error: errorLine(error) }, `${options.what} failed`);
    } else {
      options.logger.warn({ path: req.path, status: problem.status, problem: problem.type }, `${options.what} refused`);
    }
    sendProblem(res, problem, options.realm);
  };
}

function isClientHttpError(error: unknown): error is { status: number; message: string } {
  const { status, expose } = (error ?? {}) as { status?: unknown; expose?: unknown };
  return expose === true && typeof status === 'number' && status >= 400 && status < 500;
}
