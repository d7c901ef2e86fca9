import { readPointer } from '../../../contracts';
import type { StoredBody } from '../../db/event-bodies';
import { parseStoredBody } from '../../providers/body';
import { providerOf } from '../../providers/index';
import { MASK, maskPersonal, withoutAddresses } from '../../core/redact';
import type { DeliveryView } from './pages/event';

/** The most of a body the event page shows. */
const SHOWN_BYTES = 64 * 1024;

/**
 * A stored delivery as the event page shows it: its body decoded as the activities read it
 * (`parseStoredBody`: a form-encoded GitHub payload and a Twilio form as objects) and
 * pretty-printed, personal values masked unless `reveal` (an admin's audited request): those under
 * keys that name a person and those its kind declares (`personal` on `defineProvider`); a body that
 * does not parse, as text with its email addresses masked. Null when the body was erased or purged.
 */
export function decodeDelivery(stored: StoredBody, { reveal }: { reveal: boolean }): DeliveryView {
  const base = { contentType: stored.contentType, headers: stored.signatureHeaders, revealed: reveal };
  if (!stored.body) return { ...base, body: null, truncated: false };
  const raw = stored.body.toString('utf8');
  const parsed = parse(stored, stored.body);
  const text =
    parsed === undefined
      ? reveal
        ? raw
        : withoutAddresses(raw)
      : JSON.stringify(reveal ? parsed : maskPersonal(maskPointers(parsed, providerOf(stored.provider).personal ?? [])), null, 2);
  return { ...base, body: text.slice(0, SHOWN_BYTES), truncated: text.length > SHOWN_BYTES };
}

/** The body as its kind's reader parses it, else any JSON (a SendGrid item's array), else undefined. */
function parse(stored: StoredBody, raw: Buffer): unknown {
  try {
    return parseStoredBody(stored, raw);
  } catch {
    try {
      return JSON.parse(raw.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  }
}

/** The body with the value at each pointer masked (objects and arrays whole). */
function maskPointers(body: unknown, pointers: readonly string[]): unknown {
  if (pointers.length === 0 || typeof body !== 'object' || body === null) return body;
  const masked = structuredClone(body) as Record<string, unknown>;
  for (const pointer of pointers) {
    if (readPointer(masked, pointer) === undefined) continue;
    const keys = pointer
      .slice(1)
      .split('/')
      .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
    const parent = keys.slice(0, -1).reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, masked);
    parent[keys.at(-1)!] = MASK;
  }
  return masked;
}
