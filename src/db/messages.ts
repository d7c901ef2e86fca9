import type { Queryable } from './database';

/**
 * A published message's payload, stored once as the JSON text that was sent (numbers beyond 2^53
 * included) and read by each delivery attempt: workflows pass the message ID and the body's
 * fingerprint, never the payload. Keyed by fingerprint too, so a retried publish whose first try
 * was never started cannot leave another body under the message ID.
 */
export async function storePayload(
  db: Queryable,
  message: { id: string; fingerprint: string; scope: string; eventType: string; payloadJson: string },
): Promise<void> {
  await db.query(
    `INSERT INTO message_payloads (message_id, fingerprint, token_scope, event_type, payload) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (message_id, fingerprint) DO NOTHING`,
    [message.id, message.fingerprint, message.scope, message.eventType, message.payloadJson],
  );
}

/** The payload's JSON text; null once erased, undefined when it was never stored. */
export async function loadPayload(db: Queryable, messageId: string, fingerprint: string): Promise<string | null | undefined> {
  const { rows } = await db.query<{ payload: string | null }>('SELECT payload FROM message_payloads WHERE message_id = $1 AND fingerprint = $2', [
    messageId,
    fingerprint,
  ]);
  return rows[0]?.payload;
}

/** When and why a message's payload was erased. */
export interface MessageErasure {
  erasedAt: string;
  reason: string;
}

/**
 * Removes the message's payload (every stored copy of it) and records when and why; asked again,
 * changes nothing and returns the first erasure. Undefined when no payload was stored for it.
 */
export async function erasePayload(db: Queryable, messageId: string, reason: string): Promise<(MessageErasure & { erasedNow: boolean }) | undefined> {
  const erased = await db.query(
    `UPDATE message_payloads SET payload = NULL, erased_at = now(), erasure_reason = $2 WHERE message_id = $1 AND erased_at IS NULL RETURNING message_id`,
    [messageId, reason],
  );
  const erasure = await erasureOfMessage(db, messageId);
  return erasure ? { ...erasure, erasedNow: erased.rows.length > 0 } : undefined;
}

/** The message's erasure, null if its payload is stored, undefined if none ever was. */
export async function erasureOfMessage(db: Queryable, messageId: string): Promise<MessageErasure | null | undefined> {
  const { rows } = await db.query<{ erased_at: Date | null; erasure_reason: string | null }>(
    'SELECT erased_at, erasure_reason FROM message_payloads WHERE message_id = $1 ORDER BY erased_at NULLS FIRST LIMIT 1',
    [messageId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return row.erased_at ? { erasedAt: new Date(row.erased_at).toISOString(), reason: row.erasure_reason ?? '' } : null;
}
