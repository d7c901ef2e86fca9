import { createHmac, timingSafeEqual, type BinaryToTextEncoding } from 'node:crypto';

/** The secret new signatures are made with: the first configured one (the newest, during rotation). */
export function firstSecret(secrets: readonly string[], source: string): string {
  const secret = secrets[0];
  if (secret === undefined) throw new Error(`Source "${source}" has no signing secret to sign with.`);
  return secret;
}

/** HMAC-SHA256 of the raw bytes, hex-encoded. */
export function hmacSha256Hex(secret: string, body: Buffer | string): string {
  return hmacSha256(secret, body, 'hex');
}

/** HMAC-SHA256 of the raw bytes, in the encoding the provider sends. */
export function hmacSha256(secret: string | Buffer, body: Buffer | string, encoding: BinaryToTextEncoding): string {
  return createHmac('sha256', secret).update(body).digest(encoding);
}

/** Constant-time comparison of two strings of possibly different length. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** True when one of the offered signatures equals `expected`, each compared in constant time. */
export function matchesAny(offered: readonly string[], expected: string): boolean {
  return offered.some((entry) => safeEqual(entry, expected));
}
