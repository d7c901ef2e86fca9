import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';

/**
 * What one delivery may make the receiver do before it is authenticated. Each limit is far above
 * what its provider sends and keeps a refused delivery's cost linear in its bytes, with a small
 * constant: one signature computation per configured secret (docs/security.md lists them).
 */

export const KIB = 1024;
export const MIB = 1024 * KIB;

/**
 * Signatures one header may offer (Paddle's `h1`, Standard Webhooks' and Svix's `v1`/`v1a`):
 * a sender rotating its secret signs with two; more are refused unread.
 */
export const MAX_SIGNATURE_ENTRIES = 8;

/**
 * ed25519 signatures (Standard Webhooks' `v1a`) one header may offer: each costs a verification per
 * public key, and a sender rotating its key signs with two.
 */
export const MAX_ED25519_SIGNATURES = 2;

/** Fields a form body may carry (Twilio's callbacks send about 30). */
export const MAX_FORM_FIELDS = 1000;

/**
 * Items one batch may carry: Adyen sends one to a few per delivery, SendGrid's batches of up to
 * 768 KB hold a few thousand events.
 */
export const MAX_BATCH_ITEMS = 10_000;

/** A header's signature entries, refused whole when there are more than `MAX_SIGNATURE_ENTRIES`. */
export function signatureEntries<T>(entries: readonly T[], header: string, source: string): readonly T[] {
  if (entries.length > MAX_SIGNATURE_ENTRIES) {
    throw new SignatureVerificationError(`${header} offers ${entries.length} signatures; at most ${MAX_SIGNATURE_ENTRIES} are checked.`, { source: source });
  }
  return entries;
}

/** A batch's items, refused whole when there are more than `MAX_BATCH_ITEMS`. */
export function batchItems(items: readonly unknown[], source: string): readonly unknown[] {
  if (items.length > MAX_BATCH_ITEMS)
    throw new MalformedEventError(`The batch has ${items.length} items; at most ${MAX_BATCH_ITEMS} are accepted in one delivery.`, { source: source });
  return items;
}
