import { openDatabase, type Database } from '../../src/db/database';
import { migrate, MIGRATIONS } from '../../src/db/migrations';
import { createTestDatabase } from '../support/database';
import { runCli } from '../support/processes';

describe('migrate', () => {
  it('migrates a fresh database once when many processes start at the same moment', async () => {
    const fresh = await createTestDatabase();
    const processes: Database[] = await Promise.all(Array.from({ length: 8 }, () => openDatabase({ url: fresh.url })));
    try {
      const applied = await Promise.all(processes.map((db) => migrate(db)));

      expect(applied.filter((ids) => ids.length > 0)).toEqual([MIGRATIONS.map((migration) => migration.id)]);
      const { rows } = await processes[0]!.query<{ id: string }>('SELECT id FROM schema_migrations ORDER BY id');
      expect(rows.map((row) => row.id)).toEqual(MIGRATIONS.map((migration) => migration.id));
      expect(await migrate(processes[0]!)).toEqual([]);
    } finally {
      await Promise.all(processes.map((db) => db.close()));
      await fresh.drop();
    }
  });
});

describe('durable-webhooks migrate', () => {
  it("applies the pending migrations once, as a deploy runs it before the processes (the Helm chart's hook Job)", async () => {
    const fresh = await createTestDatabase();
    try {
      const first = await runCli(['migrate'], { DATABASE_URL: fresh.url });
      expect(first).toMatchObject({
        code: 0,
        output: `Applied ${MIGRATIONS.length} migration(s): ${MIGRATIONS.map((migration) => migration.id).join(', ')}.\n`,
      });
      expect(await runCli(['migrate'], { DATABASE_URL: fresh.url })).toMatchObject({ code: 0, output: 'The database is up to date.\n' });
    } finally {
      await fresh.drop();
    }
  });
});

describe('007-charge-attempts', () => {
  it("makes each event's one charge step attempt 1, keyed by the workflow ID: charged, declined (from the failed event), or still pending", async () => {
    const fresh = await createTestDatabase();
    const db = await openDatabase({ url: fresh.url });
    try {
      // The schema as the previous version left it, with its ledger rows.
      const before = MIGRATIONS.slice(
        0,
        MIGRATIONS.findIndex((migration) => migration.id === '007-charge-attempts'),
      );
      await db.transaction(async (tx) => {
        await tx.query('CREATE TABLE schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
        for (const migration of before) {
          for (const statement of migration.statements) await tx.query(statement);
          await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [migration.id]);
        }
      });
      const claim = (id: string, status: string, outcome: unknown) =>
        db.query(
          `INSERT INTO processed_events (source, event_id, event_type, workflow_id, first_execution_run_id, status, outcome) VALUES ('standard', $1, 'order.created', $2, 'run', $3, $4)`,
          [id, `shop-${id}`, status, JSON.stringify(outcome)],
        );
      const step = (id: string, pending: boolean, externalId: string | null, result: unknown) =>
        db.query(`INSERT INTO event_steps (source, event_id, step, pending, external_id, result) VALUES ('standard', $1, 'charge', $2, $3, $4)`, [
          id,
          pending,
          externalId,
          JSON.stringify(result),
        ]);
      await claim('msg_paid', 'completed', { orderId: 'o1', paymentIntentId: 'pi_paid' });
      await step('msg_paid', false, 'pi_paid', { paymentIntentId: 'pi_paid', status: 'succeeded' });
      await claim('msg_declined', 'failed', {
        type: 'PaymentDeclined',
        failure: 'Payment … declined',
        orderId: 'o2',
        declined: 'Your card was declined.',
        code: 'card_declined',
        declineCode: 'generic_decline',
        paymentIntentId: 'pi_declined',
      });
      await step('msg_declined', true, null, null);
      await claim('msg_in_flight', 'processing', null);
      await step('msg_in_flight', true, null, null);

      expect(await migrate(db)).toContain('007-charge-attempts');

      const { rows } = await db.query(
        'SELECT event_id, attempt, idempotency_key, outcome, payment_intent_id, payment_intent_status, failure, finished_at IS NOT NULL AS finished FROM charge_attempts ORDER BY event_id',
      );
      expect(rows).toEqual([
        {
          event_id: 'msg_declined',
          attempt: 1,
          idempotency_key: 'shop-msg_declined',
          outcome: 'declined',
          payment_intent_id: 'pi_declined',
          payment_intent_status: null,
          failure: {
            type: 'CardDeclined',
            message: 'Your card was declined.',
            details: { code: 'card_declined', declineCode: 'generic_decline', paymentIntentId: 'pi_declined' },
          },
          finished: true,
        },
        {
          event_id: 'msg_in_flight',
          attempt: 1,
          idempotency_key: 'shop-msg_in_flight',
          outcome: 'pending',
          payment_intent_id: null,
          payment_intent_status: null,
          failure: null,
          finished: false,
        },
        {
          event_id: 'msg_paid',
          attempt: 1,
          idempotency_key: 'shop-msg_paid',
          outcome: 'succeeded',
          payment_intent_id: 'pi_paid',
          payment_intent_status: 'succeeded',
          failure: null,
          finished: true,
        },
      ]);
    } finally {
      await db.close();
      await fresh.drop();
    }
  });
});
