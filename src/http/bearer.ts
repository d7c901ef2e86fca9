import type { Request, RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { NamedToken } from '../config';
import { AdminAuthError, TooManyFailedAttemptsError } from '../core/errors';
import { safeEqual } from '../providers/secrets';
import { sendProblem, toProblem } from './problem';

/**
 * Bearer auth against named tokens (constant-time); the matching token's name goes to
 * `res.locals.tokenName`. `variable` names what to send in the 401.
 */
export function requireToken(tokens: NamedToken[], variable: string): RequestHandler {
  return (req, res, next) => {
    const presented = bearerToken(req);
    if (presented === undefined) throw new AdminAuthError(`Send Authorization: Bearer <${variable}>.`);
    const match = tokens.find(({ token }) => safeEqual(presented, token));
    if (!match) throw new AdminAuthError(`The bearer token is not the ${variable}.`);
    res.locals.tokenName = match.name;
    next();
  };
}

/** Failed bearer attempts (401) one client address may make per minute on `/admin`, `/codec` and `/v1`; more get 429. */
export const MAX_FAILED_ATTEMPTS_PER_MINUTE = 10;

/**
 * Counts only requests without one of `tokens`, per client address (TRUST_PROXY-aware): guessing is
 * slowed, operators and API clients are not, however many of their requests run at once (a request
 * with an accepted token is never counted, not even while it runs).
 */
export function limitFailedAttempts(tokens: readonly string[]): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: MAX_FAILED_ATTEMPTS_PER_MINUTE,
    skip: (req) => {
      const presented = bearerToken(req);
      return presented !== undefined && tokens.some((token) => safeEqual(presented, token));
    },
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (_req, res) => sendProblem(res, toProblem(new TooManyFailedAttemptsError({ limit: MAX_FAILED_ATTEMPTS_PER_MINUTE }))),
  });
}

/** The token of an `Authorization: Bearer …` header, if the request has one. */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}
