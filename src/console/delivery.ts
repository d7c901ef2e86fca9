import type { StoredBody } from '../db/event-bodies';
import { maskPersonal, withoutAddresses } from '../redact';
import type { DeliveryView } from './pages/event';

/** The most of a body the event page shows. */
const SHOWN_BYTES = 64 * 1024;

/**
 * A stored delivery as the event page shows it: JSON and form bodies parsed and pretty-printed,
 * personal values masked unless `reveal` (an admin's audited request); any other body as text with
 * its email addresses masked. Null when the body was erased or purged.
 */
export function decodeDelivery(stored: StoredBody, { reveal }: { reveal: boolean }): DeliveryView {
  const base = { contentType: stored.contentType, headers: stored.signatureHeaders, revealed: reveal };
  if (!stored.body) return { ...base, body: null, truncated: false };
  const raw = stored.body.toString('utf8');
  const parsed = parse(raw, stored.contentType);
  const text = parsed === undefined ? (reveal ? raw : withoutAddresses(raw)) : JSON.stringify(reveal ? parsed : maskPersonal(parsed), null, 2);
  return { ...base, body: text.slice(0, SHOWN_BYTES), truncated: text.length > SHOWN_BYTES };
}

function parse(raw: string, contentType: string | null): unknown {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
