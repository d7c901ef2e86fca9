/**
 * The one pattern behind every side effect outside a single database transaction (a Stripe call,
 * an email): its record is written before the call and finished after it, so the ledger knows a
 * call may have happened even when its end was never written (a crash, a failing write). Both
 * records follow it: a step of an event (`event_steps`, src/db/ledger.ts) and a charge attempt
 * (`charge_attempts`, src/db/charge-attempts.ts).
 *
 *   no record ──begin──▶ pending ──finish──▶ done
 *
 * `begin` answers with the state it found:
 *   - `begun`: there was no record; now there is one, pending, and the call may be made;
 *   - `pending`: an earlier attempt began and never finished: its call may have happened, so look
 *     for what it made before calling again (with the same idempotency key);
 *   - `done`: its result; no call.
 * A database write is simpler: its record and the write share one transaction (`writeOnce`).
 */
export type Begun<Done, Pending = undefined> = { state: 'begun' } | { state: 'pending'; record: Pending } | { state: 'done'; record: Done };
