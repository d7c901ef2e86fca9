import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pg from 'pg';
import Stripe from 'stripe';

/**
 * G7's comparison: the handler the seed design describes, without Temporal. Express verifies the
 * Stripe signature, then one PostgreSQL transaction inserts into `processed_events` on a unique key
 * and writes the side effect's row; a duplicate (the insert found the key) answers 200 too.
 */
export async function startSeedHandler(databaseUrl: string, secret: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query('CREATE TABLE IF NOT EXISTS seed_processed_events (event_id text PRIMARY KEY, received_at timestamptz NOT NULL DEFAULT now())');
  await pool.query('CREATE TABLE IF NOT EXISTS seed_orders (event_id text PRIMARY KEY, session_id text NOT NULL, amount bigint)');
  const webhooks = new Stripe('sk_test_seed_handler').webhooks;
  const app = express();
  app.post('/webhooks/stripe', express.raw({ type: () => true }), async (req, res) => {
    let event: Stripe.Event;
    try {
      event = webhooks.constructEvent(req.body as Buffer, String(req.headers['stripe-signature']), secret);
    } catch {
      res.status(400).send('bad signature');
      return;
    }
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const claimed = await client.query('INSERT INTO seed_processed_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING event_id', [event.id]);
      if (claimed.rows.length > 0) {
        const session = event.data.object as { id: string; amount_total?: number };
        await client.query('INSERT INTO seed_orders (event_id, session_id, amount) VALUES ($1, $2, $3)', [event.id, session.id, session.amount_total ?? null]);
      }
      await client.query('COMMIT');
      res.status(200).json({ received: true, duplicate: claimed.rows.length === 0 });
    } catch (error) {
      await client.query('ROLLBACK');
      res.status(500).send(String(error));
    } finally {
      client.release();
    }
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
