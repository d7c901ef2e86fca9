import type { Database } from './database';

/**
 * Schema changes in order; each runs once, in a transaction, recorded in schema_migrations.
 * Never edit one that has shipped: add the next.
 */
export const MIGRATIONS: ReadonlyArray<{ id: string; statements: readonly string[] }> = [
  {
    id: '001-ledger-and-orders',
    statements: [
      // One row per event: the dedupe record that outlives Temporal's retention.
      `CREATE TABLE processed_events (
         source text NOT NULL,
         event_id text NOT NULL,
         event_type text NOT NULL,
         workflow_id text NOT NULL,
         first_execution_run_id text NOT NULL,
         status text NOT NULL DEFAULT 'processing',
         outcome jsonb,
         claimed_at timestamptz NOT NULL DEFAULT now(),
         completed_at timestamptz,
         PRIMARY KEY (source, event_id)
       )`,
      // One row per side effect of an event: what it made (Stripe object, email) and its result.
      `CREATE TABLE event_steps (
         source text NOT NULL,
         event_id text NOT NULL,
         step text NOT NULL,
         external_id text,
         result jsonb,
         recorded_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (source, event_id, step)
       )`,
      `CREATE TABLE orders (
         id text PRIMARY KEY,
         source text NOT NULL,
         event_id text NOT NULL,
         status text NOT NULL,
         customer_email text,
         amount bigint,
         currency text,
         payment_intent_id text,
         checkout_session_id text UNIQUE,
         created_at timestamptz NOT NULL DEFAULT now(),
         updated_at timestamptz NOT NULL DEFAULT now()
       )`,
      // Latest state per Stripe subscription; last_event_* order the updates.
      `CREATE TABLE subscriptions (
         id text PRIMARY KEY,
         customer text,
         status text NOT NULL,
         data jsonb NOT NULL,
         last_event_id text NOT NULL,
         last_event_created bigint NOT NULL,
         updated_at timestamptz NOT NULL DEFAULT now()
       )`,
    ],
  },
  {
    id: '002-outbound-endpoints',
    statements: [
      // Subscribers to our API's messages, per API token scope. Deleted ones are kept for their attempts.
      `CREATE TABLE endpoints (
         id text PRIMARY KEY,
         token_scope text NOT NULL,
         url text NOT NULL,
         description text,
         event_types jsonb,
         secret text NOT NULL,
         previous_secret text,
         previous_secret_expires_at timestamptz,
         disabled_at timestamptz,
         disabled_reason text,
         deleted_at timestamptz,
         created_at timestamptz NOT NULL DEFAULT now(),
         updated_at timestamptz NOT NULL DEFAULT now()
       )`,
      `CREATE INDEX endpoints_scope ON endpoints (token_scope) WHERE deleted_at IS NULL`,
      // One row per delivery attempt of a message to an endpoint.
      `CREATE TABLE delivery_attempts (
         message_id text NOT NULL,
         endpoint_id text NOT NULL,
         attempt integer NOT NULL,
         attempted_at timestamptz NOT NULL,
         status_code integer,
         latency_ms integer NOT NULL,
         error text,
         PRIMARY KEY (message_id, endpoint_id, attempt)
       )`,
    ],
  },
  {
    id: '003-replayed-bodies',
    statements: [
      // The signed body of an event whose ID is not signed (GitHub): one event per body and source.
      `ALTER TABLE processed_events ADD COLUMN body_sha256 text`,
      `CREATE UNIQUE INDEX processed_events_body ON processed_events (source, body_sha256) WHERE body_sha256 IS NOT NULL`,
    ],
  },
  {
    id: '004-message-payloads',
    statements: [
      // Each published message's payload, once, as sent; deliveries read it by message ID and fingerprint.
      `CREATE TABLE message_payloads (
         message_id text NOT NULL,
         fingerprint text NOT NULL,
         token_scope text NOT NULL,
         event_type text NOT NULL,
         payload text NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (message_id, fingerprint)
       )`,
    ],
  },
  {
    id: '005-pending-steps',
    statements: [
      // A call outside the database is written as pending before it is made, and completed after.
      `ALTER TABLE event_steps ADD COLUMN pending boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    id: '006-event-bodies',
    statements: [
      // Every event's body, as received, stored before its workflow starts; activities read it here.
      // Erasure empties body and headers and keeps the row, so a redelivery stores nothing again.
      `CREATE TABLE event_bodies (
         source text NOT NULL,
         event_id text NOT NULL,
         workflow_id text NOT NULL,
         provider text NOT NULL,
         via text NOT NULL,
         content_type text,
         signature_headers jsonb NOT NULL,
         body bytea,
         size integer NOT NULL,
         sha256 text NOT NULL,
         received_at timestamptz NOT NULL,
         erased_at timestamptz,
         PRIMARY KEY (source, event_id)
       )`,
      `CREATE INDEX event_bodies_workflow ON event_bodies (workflow_id)`,
      `CREATE INDEX processed_events_workflow ON processed_events (workflow_id)`,
      // Who erased an event's personal data, when and why: the erasure's own record.
      `CREATE TABLE event_erasures (
         workflow_id text PRIMARY KEY,
         erased_at timestamptz NOT NULL DEFAULT now(),
         erased_by text NOT NULL,
         reason text NOT NULL
       )`,
    ],
  },
  {
    id: '007-charge-attempts',
    statements: [
      // Every charge attempt of an order event, with its own Idempotency-Key and how it ended:
      // declined by the card's bank, or refused by Stripe as a request (which Stripe does not store
      // under the key, so a re-run of that attempt calls again).
      `CREATE TABLE charge_attempts (
         source text NOT NULL,
         event_id text NOT NULL,
         attempt integer NOT NULL,
         idempotency_key text NOT NULL,
         payment_method text,
         outcome text NOT NULL DEFAULT 'pending' CHECK (outcome IN ('pending', 'succeeded', 'declined', 'refused')),
         payment_intent_id text,
         payment_intent_status text,
         failure jsonb,
         started_at timestamptz NOT NULL DEFAULT now(),
         finished_at timestamptz,
         PRIMARY KEY (source, event_id, attempt)
       )`,
      // At most one attempt per event is pending or succeeded: one success, and no call while another may have charged.
      `CREATE UNIQUE INDEX charge_attempts_one_open_or_paid ON charge_attempts (source, event_id) WHERE outcome IN ('pending', 'succeeded')`,
      // The one charge step of events charged before: attempt 1, keyed by the workflow ID. A decline
      // left its step pending and failed the event with PaymentDeclined.
      `INSERT INTO charge_attempts (source, event_id, attempt, idempotency_key, outcome, payment_intent_id, payment_intent_status, failure, started_at, finished_at)
       SELECT s.source, s.event_id, 1, e.workflow_id, d.outcome, COALESCE(s.external_id, e.outcome->>'paymentIntentId'), s.result->>'status', CASE WHEN d.outcome = 'declined' THEN jsonb_build_object('type', 'CardDeclined', 'message', e.outcome->>'declined', 'details', e.outcome - 'type' - 'declined' - 'failure' - 'orderId') END, s.recorded_at,
              CASE WHEN d.outcome <> 'pending' THEN COALESCE(e.completed_at, s.recorded_at) END
       FROM event_steps s JOIN processed_events e USING (source, event_id)
       CROSS JOIN LATERAL (SELECT CASE WHEN NOT s.pending THEN 'succeeded' WHEN e.outcome->>'type' = 'PaymentDeclined' THEN 'declined' ELSE 'pending' END AS outcome) d
       WHERE s.step = 'charge'`,
    ],
  },
  {
    id: '008-start-inbox',
    statements: [
      // The body store is the inbox: each row says which flow to start and with what input, and
      // whether Temporal has confirmed the start. `start_due_at` is when a sweeper may take it: the
      // receiver that accepted it first (its fast path), then after each failed try, with backoff.
      `ALTER TABLE event_bodies ADD COLUMN start jsonb, ADD COLUMN started_at timestamptz, ADD COLUMN start_due_at timestamptz,
         ADD COLUMN start_attempts integer NOT NULL DEFAULT 0, ADD COLUMN start_error text`,
      // Bodies stored before had their start made (or refused with 503, and redelivered) by the receiver.
      `UPDATE event_bodies SET started_at = received_at`,
      `CREATE INDEX event_bodies_unstarted ON event_bodies (start_due_at) WHERE started_at IS NULL`,
    ],
  },
  {
    id: '009-body-hash',
    // A replay (the same body under another delivery ID) is found by its hash before it is stored.
    statements: [`CREATE INDEX event_bodies_sha256 ON event_bodies (source, sha256)`],
  },
  {
    id: '010-subscription-event-source',
    // Erasing an event clears the subscription it wrote by source and event ID, not the ID alone
    // (two sources can send the same ID). Rows written before this have none and match by ID.
    statements: [`ALTER TABLE subscriptions ADD COLUMN last_event_source text`],
  },
  {
    id: '011-message-erasure',
    // A message's payload can be erased (`POST /v1/messages/:id/erase`): the row stays, without it.
    statements: [
      `ALTER TABLE message_payloads ALTER COLUMN payload DROP NOT NULL`,
      `ALTER TABLE message_payloads ADD COLUMN erased_at timestamptz`,
      `ALTER TABLE message_payloads ADD COLUMN erasure_reason text`,
    ],
  },
  {
    id: '012-erasure-requested-by',
    // `erased_by` is who was authenticated (an admin token's name); what the caller said goes here.
    statements: [`ALTER TABLE event_erasures ADD COLUMN requested_by text`],
  },
  {
    id: '013-dead-letters',
    // A start Temporal keeps refusing (not one it could not answer) stops being retried: the row is
    // kept, counted, and started again by `durable-webhooks inbox retry` once the cause is fixed.
    statements: [`ALTER TABLE event_bodies ADD COLUMN dead_lettered_at timestamptz`],
  },
  {
    id: '014-retention',
    // A completed event's body is purged after BODY_RETENTION (the row, its hash, stays); the row
    // goes after DEDUPE_RETENTION. Both find their rows by age.
    statements: [`ALTER TABLE event_bodies ADD COLUMN purged_at timestamptz`, `CREATE INDEX event_bodies_received ON event_bodies (received_at)`],
  },
  {
    id: '015-holds-and-budgets',
    statements: [
      // An operator's hold on a source (all its types, or a pattern): matching deliveries are stored
      // and answered, and wait. The row stays after release: it is the hold's audit trail.
      `CREATE TABLE holds (
         id text PRIMARY KEY,
         source text NOT NULL,
         type_pattern text,
         reason text,
         created_by text NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now(),
         released_at timestamptz,
         released_by text,
         release_rate double precision
       )`,
      `CREATE INDEX holds_active ON holds (source) WHERE released_at IS NULL`,
      // Start budgets shared by every receiver and worker: a token bucket per release or per source's
      // standing rate, refilled at `rate` per second up to `burst`.
      `CREATE TABLE start_budgets (
         id text PRIMARY KEY,
         rate double precision NOT NULL,
         burst double precision NOT NULL,
         tokens double precision NOT NULL DEFAULT 0,
         refilled_at timestamptz NOT NULL DEFAULT clock_timestamp()
       )`,
      // held_by: the hold a row waits for; paced_by: the budget its start draws from; tenant: whose
      // event it is, for a fair drain (the flow's tenant field); ignored_at: a route said `ignore`,
      // so it is stored and nothing starts.
      `ALTER TABLE event_bodies ADD COLUMN held_by text, ADD COLUMN paced_by text, ADD COLUMN tenant text, ADD COLUMN ignored_at timestamptz`,
      `CREATE INDEX event_bodies_held ON event_bodies (held_by) WHERE held_by IS NOT NULL AND started_at IS NULL`,
      `CREATE INDEX event_bodies_paced ON event_bodies (paced_by, tenant, received_at) WHERE paced_by IS NOT NULL AND started_at IS NULL`,
      // Event types nothing routes (the default flow's), counted by source and type.
      `CREATE INDEX event_bodies_unrouted ON event_bodies (source, (start->'input'->>'type'), received_at) WHERE start->>'flow' = 'recordEvent'`,
    ],
  },
  {
    id: '016-console',
    statements: [
      // Deliveries refused before they were recorded, without their bodies: what the console's
      // refused page shows. Bounded by a row cap and a retention (src/db/refusals.ts).
      `CREATE TABLE refused_deliveries (
         id bigserial PRIMARY KEY,
         refused_at timestamptz NOT NULL DEFAULT now(),
         source text NOT NULL,
         path text NOT NULL,
         status integer NOT NULL,
         reason text NOT NULL,
         detail text,
         client text,
         header_names text[] NOT NULL
       )`,
      `CREATE INDEX refused_deliveries_at ON refused_deliveries (refused_at)`,
      // Console sign-ins: an admin or viewer token exchanged for a session cookie, stored by its hash.
      `CREATE TABLE console_sessions (
         id_sha256 text PRIMARY KEY,
         token_name text NOT NULL,
         role text NOT NULL CHECK (role IN ('admin', 'viewer')),
         csrf text NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now(),
         expires_at timestamptz NOT NULL
       )`,
      // What operators did in the console, and every reveal of personal data.
      `CREATE TABLE console_audit (
         id bigserial PRIMARY KEY,
         at timestamptz NOT NULL DEFAULT now(),
         actor text NOT NULL,
         action text NOT NULL,
         target text,
         detail jsonb
       )`,
      // The ledger's status and failure class, copied onto the event's row by a trigger, so one
      // table answers the console's lists with indexes. The class is the failure's stable kind
      // (the flow records it), never its text.
      `ALTER TABLE event_bodies ADD COLUMN ledger_status text, ADD COLUMN error_class text`,
      `CREATE FUNCTION copy_ledger_status() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE event_bodies SET ledger_status = NEW.status,
           error_class = CASE WHEN NEW.status = 'failed' THEN COALESCE(NEW.outcome->>'errorClass', NEW.outcome->>'type', CASE WHEN NEW.outcome ? 'terminated' THEN 'Terminated' END, 'unknown') END
         WHERE source = NEW.source AND event_id = NEW.event_id;
         RETURN NULL;
       END $$`,
      `CREATE TRIGGER processed_events_copy_status AFTER INSERT OR UPDATE OF status, outcome ON processed_events FOR EACH ROW EXECUTE FUNCTION copy_ledger_status()`,
      `UPDATE event_bodies b SET ledger_status = p.status,
         error_class = CASE WHEN p.status = 'failed' THEN COALESCE(p.outcome->>'errorClass', p.outcome->>'type', CASE WHEN p.outcome ? 'terminated' THEN 'Terminated' END, 'unknown') END
       FROM processed_events p WHERE p.source = b.source AND p.event_id = b.event_id`,
      `CREATE INDEX event_bodies_source_received ON event_bodies (source, received_at)`,
      `CREATE INDEX event_bodies_type_received ON event_bodies ((start->'input'->>'type'), received_at)`,
      `CREATE INDEX event_bodies_tenant_received ON event_bodies (tenant, received_at) WHERE tenant IS NOT NULL`,
      `CREATE INDEX event_bodies_status_received ON event_bodies (ledger_status, received_at)`,
      `CREATE INDEX event_bodies_unstarted_received ON event_bodies (received_at) WHERE started_at IS NULL`,
      // Failed events, and running ones an activity keeps failing (src/temporal/stuck-events.ts), have a class.
      `CREATE INDEX event_bodies_failure_groups ON event_bodies (source, (start->'input'->>'type'), error_class, received_at) WHERE error_class IS NOT NULL`,
      // The failure groups an alert was sent for, at what size, and the size last seen: one alert per
      // new group, one more when it grows past the threshold. A group that empties is forgotten.
      // An endpoint that takes a message's payload as its body, unwrapped: a Slack incoming webhook for alerts.
      `ALTER TABLE endpoints ADD COLUMN body_format text NOT NULL DEFAULT 'standard-webhooks' CHECK (body_format IN ('standard-webhooks', 'payload'))`,
      // The Idempotency-Key each call outside the database was made with: the console shows them.
      `ALTER TABLE event_steps ADD COLUMN idempotency_key text`,
      `CREATE TABLE alerted_groups (
         fingerprint text PRIMARY KEY,
         alerted_count integer NOT NULL,
         seen_count integer NOT NULL,
         alerted_at timestamptz NOT NULL DEFAULT now()
       )`,
      `CREATE TABLE alerted_dead_letters (
         source text NOT NULL,
         event_id text NOT NULL,
         alerted_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (source, event_id)
       )`,
    ],
  },
  {
    id: '017-replay-scope-and-fulfilment',
    statements: [
      // A body is a replay within its scope: '' for every type, or the one type its flow may take it
      // under (a flow that decides from the signed body: WebhookEvent.replayScope).
      `ALTER TABLE processed_events ADD COLUMN replay_scope text NOT NULL DEFAULT ''`,
      `DROP INDEX processed_events_body`,
      `CREATE UNIQUE INDEX processed_events_body ON processed_events (source, replay_scope, body_sha256) WHERE body_sha256 IS NOT NULL`,
      // The event that fulfilled an order: another event about the same order does not fulfil it again.
      `ALTER TABLE orders ADD COLUMN fulfilled_by text`,
    ],
  },
  {
    id: '018-console-sessions-bound-to-tokens',
    statements: [
      // A session is worth its token: those made before they were bound to one sign in again.
      `DELETE FROM console_sessions`,
      `ALTER TABLE console_sessions ADD COLUMN token_sha256 text NOT NULL`,
    ],
  },
  {
    id: '019-body-readers',
    statements: [
      // A body another workflow still has to read after its event completed (an entity's update):
      // retention keeps it until that reader has consumed it.
      `ALTER TABLE event_bodies ADD COLUMN reader_pending boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    id: '020-entity-keys',
    statements: [
      // What a keyed flow's entity knows about each key, outliving the entity's runs: the last event
      // applied and its version (a new run starts from it), and the failed event the key waits on
      // (its request for the turn, with the failure).
      `CREATE TABLE entity_keys (
        flow text NOT NULL,
        source text NOT NULL,
        key text NOT NULL,
        last_event_id text,
        last_version jsonb,
        applied_at timestamptz,
        parked jsonb,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (flow, source, key)
      )`,
      `CREATE INDEX entity_keys_parked ON entity_keys (updated_at) WHERE parked IS NOT NULL`,
      // Each key parked on an event is alerted once, whichever receiver looks first.
      `CREATE TABLE alerted_parked_keys (
        flow text NOT NULL,
        source text NOT NULL,
        key text NOT NULL,
        event_id text NOT NULL,
        alerted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (flow, source, key, event_id)
      )`,
    ],
  },
  {
    id: '021-customers',
    statements: [
      // Each Stripe customer's newest state (syncStripeCustomer): no personal data, only what a flow
      // decides on. The event that stored it, its created and source, order the updates.
      `CREATE TABLE customers (
        id text PRIMARY KEY,
        balance bigint,
        currency text,
        delinquent boolean NOT NULL,
        deleted boolean NOT NULL,
        last_event_id text NOT NULL,
        last_event_created bigint NOT NULL,
        last_event_source text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
    ],
  },
  {
    id: '022-keyed-events',
    statements: [
      // A keyed flow's event names its flow and key once it asks for its turn: the receiver counts
      // each key's events not done yet (webhook_key_waiting_events) from the few rows still processing.
      `ALTER TABLE processed_events ADD COLUMN entity_flow text, ADD COLUMN entity_key text`,
      `CREATE INDEX processed_events_keyed_open ON processed_events (entity_flow, source, entity_key) WHERE entity_key IS NOT NULL AND status = 'processing'`,
    ],
  },
  {
    id: '023-filtered-events',
    statements: [
      // A route's filters took the event for no flow (docs/flows.md#routes): stored, answered and
      // started for nothing, as an ignored one (ignored_at set too), and listed as `filtered`.
      `ALTER TABLE event_bodies ADD COLUMN filtered boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    id: '024-waiters',
    statements: [
      // What a flow's waits find a stored event by (src/flows.ts waitKeysOf), written with the body;
      // and when the event was matched against the waiters waiting then (null: not yet, a sweeper's to do).
      `ALTER TABLE event_bodies ADD COLUMN wait_keys text[], ADD COLUMN waits_matched_at timestamptz`,
      // Without GIN's pending list (fastupdate): every lookup would scan the list of keys not merged yet.
      `CREATE INDEX event_bodies_wait_keys ON event_bodies USING gin (wait_keys) WITH (fastupdate = off) WHERE wait_keys IS NOT NULL`,
      `CREATE INDEX event_bodies_waits_unmatched ON event_bodies (received_at) WHERE wait_keys IS NOT NULL AND waits_matched_at IS NULL`,
      // Each workflow's wait for another event (docs/flows.md#wait-for-another-event): what it waits
      // for, and the event that matched it, once, whichever came first; signalled is when Temporal took the signal.
      `CREATE TABLE waiters (
        workflow_id text NOT NULL,
        wait text NOT NULL,
        flow text NOT NULL,
        source text NOT NULL,
        type text NOT NULL,
        wait_key text NOT NULL,
        match text NOT NULL,
        fields jsonb NOT NULL,
        waiting jsonb NOT NULL,
        until timestamptz NOT NULL,
        status text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'matched', 'timed_out')),
        matched jsonb,
        matched_at timestamptz,
        signalled_at timestamptz,
        registered_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workflow_id, wait)
      )`,
      `CREATE INDEX waiters_open ON waiters (source, type, wait_key) WHERE status = 'waiting'`,
      `CREATE INDEX waiters_unsignalled ON waiters (matched_at) WHERE status = 'matched' AND signalled_at IS NULL`,
      // Which awaited types' stored events carry the keys of which fields, up to when: a build that
      // declares a new wait indexes the events stored before it, then hourly those a receiver still on
      // an older build stored since (src/intake/waits.ts indexStoredEvents).
      `CREATE TABLE wait_indexes (
        type text NOT NULL,
        fields text NOT NULL,
        indexed_at timestamptz NOT NULL,
        PRIMARY KEY (type, fields)
      )`,
      // Refunds recorded against orders by the checkout that waited for them (recordCheckoutRefund).
      `CREATE TABLE order_refunds (
        order_id text NOT NULL,
        refund_event_id text NOT NULL,
        source text NOT NULL,
        charge_id text,
        amount_refunded bigint,
        currency text,
        recorded_by text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (order_id, refund_event_id)
      )`,
    ],
  },
  {
    id: '025-key-holders',
    statements: [
      // Who runs a key's events now (docs/entities.md#how-it-runs-in-temporal): an event's workflow
      // holding the key itself (the key was free when it asked, so no entity was started), the key's
      // entity, or nobody (null). handoff: an event asked while another held the key, and waits in
      // the entity; the holder hands the key to the entity when it ends.
      `ALTER TABLE entity_keys ADD COLUMN holder text, ADD COLUMN holder_request jsonb, ADD COLUMN handoff boolean NOT NULL DEFAULT false`,
    ],
  },
  {
    id: '026-entity-waiting',
    statements: [
      // A serial key's requests beyond what its entity's run carries (CARRIED_REQUESTS), until the
      // entity takes them back (taken: the take that handed them back, forgotten at the next take).
      `CREATE TABLE entity_waiting (
        flow text NOT NULL,
        source text NOT NULL,
        key text NOT NULL,
        event_id text NOT NULL,
        request jsonb NOT NULL,
        taken text,
        PRIMARY KEY (flow, source, key, event_id)
      )`,
    ],
  },
];

/**
 * Applies pending migrations; safe with several receivers and workers starting at once on a fresh
 * database. Everything, the bookkeeping table too, runs under one advisory lock: two concurrent
 * `CREATE TABLE IF NOT EXISTS` can otherwise both try to create it, and one fails.
 */
export async function migrate(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(7261001)');
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await tx.query<{ id: string }>('SELECT id FROM schema_migrations');
    const applied = new Set(rows.map((row) => row.id));
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.id));
    for (const migration of pending) {
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [migration.id]);
    }
    return pending.map((migration) => migration.id);
  });
}
