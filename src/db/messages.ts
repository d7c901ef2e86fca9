import type { Queryable } from './database';

/**
 * A published message's payload, stored once as the JSON text that was sent (numbers beyond 2^53
 * included) and read by each delivery attempt: workflows pass the message ID and the body's
 * fingerprint, never the payload. Keyed by fingerprint too, so a retried publish whose first try
 * was never started cannot leave another body under the message ID.
 */
export async function storePayload(db: Queryable, message: { id: string; fingerprint: string; scope: string; eventType: string; payloadJson: string }): Promise<void> {
  await db.query(
    `INSERT INTO message_payloads (message_id, fingerprint, token_scope, event_type, payload) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (message_id, fingerprint) DO NOTHING`,
    [message.id, message.fingerprint, message.scope, message.eventType, message.payloadJson],
  );
}

/** The payload's JSON text, or undefined when it was never stored. */
export async function loadPayload(db: Queryable, messageId: string, fingerprint: string): Promise<string | undefined> {
  const { rows } = await db.query<{ payload: string }>('SELECT payload FROM message_payloads WHERE message_id = $1 AND fingerprint = $2', [messageId, fingerprint]);
  return rows[0]?.payload;
}
