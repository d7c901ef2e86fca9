import { MalformedEventError } from '../core/delivery-errors';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body as text for a provider library that verifies text, not bytes (Shopify's, Slack's,
 * standardwebhooks): a body that is not valid UTF-8 is refused before any signature is computed.
 * Strict decoding (nothing replaced, a BOM kept) maps distinct bytes to distinct text, so verifying
 * the text verifies the exact bytes received.
 */
export function utf8Text(rawBody: Buffer, source: string): string {
  try {
    return strictUtf8.decode(rawBody);
  } catch {
    throw new MalformedEventError('The body is not valid UTF-8.', { source: source });
  }
}

/** Parses a verified body as a JSON object, or throws `MalformedEventError` naming the source. */
export function parseJsonObject(text: string, source: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedEventError('The body is not valid JSON.', { source: source });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MalformedEventError('The body must be a JSON object.', { source: source });
  }
  return value as Record<string, unknown>;
}

/** Reads a non-empty string field, or throws `MalformedEventError` naming the field. */
export function requireString(value: unknown, what: string, source: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new MalformedEventError(`The event has no ${what}.`, { source: source });
  }
  return value;
}

/** The `id` of an object-valued field, when there is one. */
export function objectId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

/**
 * The ISO 8601 form of a time the provider gave (milliseconds since the epoch, or text `Date` reads),
 * or of `fallback` when it gave none or one no `Date` can hold: a sender's odd timestamp never fails a delivery.
 */
export function isoTime(value: unknown, fallback: Date): string {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? fallback.toISOString() : date.toISOString();
}

/** The strings of a JSON object's list under `key` (a provider's published addresses); none when it is not one. */
export function stringsAt(document: unknown, key: string): string[] {
  const list = typeof document === 'object' && document !== null ? (document as Record<string, unknown>)[key] : undefined;
  return Array.isArray(list) ? list.filter((item): item is string => typeof item === 'string') : [];
}
