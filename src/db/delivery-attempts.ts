import type { Queryable } from './database';

/** One attempt to deliver a message to an endpoint, as `GET /v1/messages/:id` shows it. */
export interface AttemptRecord {
  endpointId: string;
  attempt: number;
  at: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** Records an attempt; an activity retry of the same attempt keeps the first record. */
export async function recordAttempt(db: Queryable, messageId: string, record: Omit<AttemptRecord, 'at'> & { at: Date }): Promise<void> {
  await db.query(
    `INSERT INTO delivery_attempts (message_id, endpoint_id, attempt, attempted_at, status_code, latency_ms, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
    [messageId, record.endpointId, record.attempt, record.at, record.statusCode, record.latencyMs, record.error],
  );
}

/** Every attempt for a message, by endpoint, then attempt number. */
export async function attemptsOf(db: Queryable, messageId: string): Promise<AttemptRecord[]> {
  const { rows } = await db.query<{
    endpoint_id: string;
    attempt: number;
    attempted_at: Date;
    status_code: number | null;
    latency_ms: number;
    error: string | null;
  }>('SELECT endpoint_id, attempt, attempted_at, status_code, latency_ms, error FROM delivery_attempts WHERE message_id = $1 ORDER BY endpoint_id, attempt', [
    messageId,
  ]);
  return rows.map((row) => ({
    endpointId: row.endpoint_id,
    attempt: row.attempt,
    at: new Date(row.attempted_at).toISOString(),
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    error: row.error,
  }));
}
