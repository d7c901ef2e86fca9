import { beginChargeAttempt, finishChargeAttempt } from '../../src/db/charge-attempts';
import { callOnce, claimEvent } from '../../src/db/ledger';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * The idempotency-record port (src/db/idempotency.ts) on real PostgreSQL: each record begins, is
 * found pending by a later attempt, and once done is answered from the ledger with no call.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db?.drop());

const event = (eventId: string) => ({ source: 'standard', eventId });

describe('a step that calls outside the database', () => {
  it('calls once when done, and calls again (same key) when an earlier attempt never finished it', async () => {
    const key = { ...event('msg_step'), step: 'email:receipt' };
    const calls: string[] = [];
    const call = (id: string) => async () => {
      calls.push(id);
      return { externalId: id, result: { id } };
    };
    await expect(callOnce(db, key, call('first'))).resolves.toEqual({ id: 'first' });
    await expect(callOnce(db, key, call('second'))).resolves.toEqual({ id: 'first' });
    expect(calls).toEqual(['first']);

    const crashed = { ...key, step: 'email:crashed' };
    await expect(callOnce(db, crashed, () => Promise.reject(new Error('the process died after the call')))).rejects.toThrow('died');
    expect((await db.query('SELECT pending FROM event_steps WHERE event_id = $1 AND step = $2', ['msg_step', 'email:crashed'])).rows).toEqual([
      { pending: true },
    ]);
    await expect(callOnce(db, crashed, call('retry'))).resolves.toEqual({ id: 'retry' });
    expect((await db.query('SELECT pending, external_id FROM event_steps WHERE event_id = $1 AND step = $2', ['msg_step', 'email:crashed'])).rows).toEqual([
      { pending: false, external_id: 'retry' },
    ]);
  });
});

describe('a charge attempt', () => {
  const attempt = (n: number) => ({ attempt: n, idempotencyKey: `msg:charge:${n}`, paymentMethod: 'pm_card_visa' });

  it('begins, is pending to any later begin until it ends, and once succeeded answers every attempt', async () => {
    const key = event('msg_charge_1');
    expect(await beginChargeAttempt(db, key, attempt(1))).toEqual({ state: 'begun' });
    expect(await beginChargeAttempt(db, key, attempt(1))).toMatchObject({ state: 'pending', record: { attempt: 1, outcome: 'pending' } });
    expect(await beginChargeAttempt(db, key, attempt(2))).toMatchObject({ state: 'pending', record: { attempt: 1 } });
    await finishChargeAttempt(db, key, 1, { outcome: 'succeeded', paymentIntentId: 'pi_1', paymentIntentStatus: 'succeeded' });
    expect(await beginChargeAttempt(db, key, attempt(2))).toMatchObject({
      state: 'done',
      record: { attempt: 1, outcome: 'succeeded', paymentIntentId: 'pi_1' },
    });
  });

  it('answers a declined attempt as done, and begins a refused one again, but not while another attempt is pending', async () => {
    const key = event('msg_charge_2');
    await beginChargeAttempt(db, key, attempt(1));
    await finishChargeAttempt(db, key, 1, { outcome: 'declined', failure: { type: 'CardDeclined', message: 'Your card was declined.', details: {} } });
    expect(await beginChargeAttempt(db, key, attempt(1))).toMatchObject({ state: 'done', record: { outcome: 'declined' } });

    expect(await beginChargeAttempt(db, key, attempt(2))).toEqual({ state: 'begun' });
    await finishChargeAttempt(db, key, 2, { outcome: 'refused', failure: { type: 'StripeInvalidRequest', message: 'No such PaymentMethod', details: {} } });
    expect(await beginChargeAttempt(db, key, attempt(3))).toEqual({ state: 'begun' });
    // Attempt 2 run again while 3 may be charging: it waits for 3 rather than calling.
    expect(await beginChargeAttempt(db, key, attempt(2))).toMatchObject({ state: 'pending', record: { attempt: 3 } });
    await finishChargeAttempt(db, key, 3, { outcome: 'declined', failure: { type: 'CardDeclined', message: 'Your card was declined.', details: {} } });
    expect(await beginChargeAttempt(db, key, attempt(2))).toEqual({ state: 'begun' });
  });
});

describe('the ledger claim of an event whose ID (or type) is unsigned', () => {
  const claim = (eventId: string, type: string, replayScope?: string) =>
    claimEvent(db, {
      source: 'shopify',
      eventId,
      type,
      workflowId: eventId,
      firstExecutionRunId: `run-${eventId}`,
      bodySha256: 'sha-one-body',
      ...(replayScope !== undefined && { replayScope }),
    });

  it('refuses the same body under another ID within its scope: any type without one, the same type with one', async () => {
    await expect(claim('e1', 'orders/updated', 'orders/updated')).resolves.toBe('claimed');
    await expect(claim('e2', 'orders/paid', 'orders/paid')).resolves.toBe('claimed');
    await expect(claim('e3', 'orders/paid', 'orders/paid')).resolves.toBe('replay');
    await expect(claim('e4', 'orders/cancelled')).resolves.toBe('claimed');
    await expect(claim('e5', 'orders/fulfilled')).resolves.toBe('replay');
  });
});
