import { isUniqueViolation, type Queryable } from './database';
import type { Begun } from './idempotency';

/**
 * `pending`: started, its Stripe call made or about to be, its end not (yet) written. `declined`:
 * the card was declined (Stripe keeps that answer under the key). `refused`: Stripe refused the
 * request itself, storing nothing under the key, so a re-run of the attempt calls again.
 */
export type ChargeOutcome = 'pending' | 'succeeded' | 'declined' | 'refused';

/** One charge attempt of an order event, as the ledger holds it. */
export interface ChargeAttempt {
  attempt: number;
  idempotencyKey: string;
  paymentMethod: string | null;
  outcome: ChargeOutcome;
  paymentIntentId: string | null;
  paymentIntentStatus: string | null;
  /** Why it did not charge: the failure's type and message, and Stripe's codes. */
  failure: ChargeFailure | null;
  startedAt: string;
  finishedAt: string | null;
}

export interface ChargeFailure {
  type: string;
  message: string;
  /** Stripe's codes, as the activity's failure carried them (`code`, `declineCode`, `paymentIntentId`). */
  details: Record<string, unknown>;
}

interface EventKey {
  source: string;
  eventId: string;
}

type Row = {
  attempt: number;
  idempotency_key: string;
  payment_method: string | null;
  outcome: ChargeOutcome;
  payment_intent_id: string | null;
  payment_intent_status: string | null;
  failure: ChargeFailure | null;
  started_at: Date;
  finished_at: Date | null;
};

const COLUMNS = 'attempt, idempotency_key, payment_method, outcome, payment_intent_id, payment_intent_status, failure, started_at, finished_at';

/**
 * Begins attempt N of the event's charge (the states of ./idempotency.ts): `begun`, pending, and
 * its call may be made; `done`, the event's successful attempt or this attempt declined, and no call;
 * `pending`, an attempt (this one from an earlier try, or another) that began and never ended, whose
 * call may have charged. A unique index lets at most one attempt per event be pending or succeeded,
 * so there is at most one success, and no call while another attempt's call may have charged. An
 * attempt Stripe `refused` stored nothing under its key, and begins again.
 */
export async function beginChargeAttempt(
  db: Queryable,
  key: EventKey,
  attempt: { attempt: number; idempotencyKey: string; paymentMethod: string },
): Promise<Begun<ChargeAttempt, ChargeAttempt>> {
  for (;;) {
    try {
      const { rows } = await db.query(
        `INSERT INTO charge_attempts (source, event_id, attempt, idempotency_key, payment_method) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (source, event_id, attempt) DO UPDATE SET outcome = 'pending', idempotency_key = EXCLUDED.idempotency_key,
           payment_method = EXCLUDED.payment_method, failure = NULL, started_at = now(), finished_at = NULL
         WHERE charge_attempts.outcome = 'refused'
         RETURNING attempt`,
        [key.source, key.eventId, attempt.attempt, attempt.idempotencyKey, attempt.paymentMethod],
      );
      if (rows.length > 0) return { state: 'begun' };
    } catch (error) {
      if (!isUniqueViolation(error, 'charge_attempts_one_open_or_paid')) throw error;
    }
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} FROM charge_attempts
       WHERE source = $1 AND event_id = $2 AND (attempt = $3 OR outcome IN ('pending', 'succeeded'))
       ORDER BY outcome = 'succeeded' DESC, outcome = 'pending' DESC, attempt = $3 DESC LIMIT 1`,
      [key.source, key.eventId, attempt.attempt],
    );
    // What stood in the way may have ended since (nothing found, or only this attempt's refused row): begin again.
    const standing = rows[0] && toAttempt(rows[0]);
    if (standing?.outcome === 'pending') return { state: 'pending', record: standing };
    if (standing?.outcome === 'succeeded' || standing?.outcome === 'declined') return { state: 'done', record: standing };
  }
}

/** Writes how a pending attempt ended, with the key and payment method it was called with. */
export async function finishChargeAttempt(
  db: Queryable,
  key: EventKey,
  attempt: number,
  end: { outcome: Exclude<ChargeOutcome, 'pending'>; paymentIntentId?: string | null; paymentIntentStatus?: string | null; failure?: ChargeFailure },
): Promise<void> {
  await db.query(
    `UPDATE charge_attempts SET outcome = $4, payment_intent_id = COALESCE($5, payment_intent_id), payment_intent_status = COALESCE($6, payment_intent_status),
       failure = $7, finished_at = now()
     WHERE source = $1 AND event_id = $2 AND attempt = $3 AND outcome = 'pending'`,
    [
      key.source,
      key.eventId,
      attempt,
      end.outcome,
      end.paymentIntentId ?? null,
      end.paymentIntentStatus ?? null,
      end.failure ? JSON.stringify(end.failure) : null,
    ],
  );
}

/** Every charge attempt of the event, first first. */
export async function chargeAttempts(db: Queryable, key: EventKey): Promise<ChargeAttempt[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM charge_attempts WHERE source = $1 AND event_id = $2 ORDER BY attempt`, [
    key.source,
    key.eventId,
  ]);
  return rows.map(toAttempt);
}

function toAttempt(row: Row): ChargeAttempt {
  return {
    attempt: row.attempt,
    idempotencyKey: row.idempotency_key,
    paymentMethod: row.payment_method,
    outcome: row.outcome,
    paymentIntentId: row.payment_intent_id,
    paymentIntentStatus: row.payment_intent_status,
    failure: row.failure,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at && new Date(row.finished_at).toISOString(),
  };
}
