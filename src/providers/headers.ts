import type { IncomingHttpHeaders } from 'node:http';
import { SignatureVerificationError } from '../core/delivery-errors';

/** A signing header's value, or `SignatureVerificationError` naming it when it is missing or repeated. */
export function requiredHeader(headers: IncomingHttpHeaders, name: string, source: string): string {
  const value = headers[name];
  if (typeof value !== 'string' || value === '') {
    throw new SignatureVerificationError(`The ${name} header is missing.`, { source: source });
  }
  return value;
}

/** A header's value when it was sent once and is not empty. */
export function optionalHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Refuses a signed time further than `toleranceSeconds` from when the delivery was received (either
 * way: a timestamp from the future is as suspect as an old one). The clock is the receiver's,
 * injected, never the provider library's own `Date.now()`.
 */
export function checkTolerance(signedAtSeconds: number, receivedAt: Date, toleranceSeconds: number, what: string, source: string): void {
  if (!Number.isFinite(signedAtSeconds) || Math.abs(Math.floor(receivedAt.getTime() / 1000) - signedAtSeconds) > toleranceSeconds) {
    throw new SignatureVerificationError(`${what} is outside the ${toleranceSeconds} s tolerance.`, { source: source });
  }
}
