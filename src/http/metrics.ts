import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../core/logger';
import { listenForMetrics } from '../core/metrics-port';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Backlog } from '../db/inbox';

/** What the receiver's gauges read from the body store at each scrape. */
export interface MetricReads {
  backlog?: () => Promise<Backlog>;
  held?: () => Promise<Array<{ source: string; type: string; count: number }>>;
  unrouted?: () => Promise<Array<{ source: string; type: string; count: number }>>;
  parked?: () => Promise<Array<{ flow: string; source: string; count: number }>>;
  waiting?: () => Promise<Array<{ flow: string; source: string; key: string; count: number }>>;
}

/** The receiver's Prometheus metrics, on a registry of its own (one per app); the inbox's backlog and held rows read at each scrape. */
export function createMetrics({ backlog, held, unrouted, parked, waiting }: MetricReads = {}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  if (backlog) backlogGauges(registry, backlog);
  if (held)
    counts(
      registry,
      'webhook_held_events',
      'Events stored and waiting for an operator to release their hold (durable-webhooks holds), by source and type (the 100 largest).',
      ['source', 'type'],
      held,
    );
  if (unrouted)
    counts(
      registry,
      'webhook_unrouted_events',
      "Events of a type no route maps (recorded and ignored) over the last 7 days, by source and type (the 100 most frequent): a provider's new event type.",
      ['source', 'type'],
      unrouted,
    );
  if (parked)
    counts(
      registry,
      'webhook_parked_keys',
      'Keys of keyed flows waiting on a failed event until an operator skips or retries it (durable-webhooks entities list --parked), by flow and source.',
      ['flow', 'source'],
      parked,
    );
  if (waiting)
    counts(
      registry,
      'webhook_key_waiting_events',
      "Keyed flows' events not done yet (waiting for their key's turn, or running in it), for the ten keys with the most (durable-webhooks entities show), by flow, source and key.",
      ['flow', 'source', 'key'],
      waiting,
    );
  return {
    registry,
    verifications: new Counter({
      name: 'webhook_signature_verifications_total',
      help: "Accepted deliveries by source and the secret that signed them: current, or previous (a rotation's old one, still in use while this grows).",
      labelNames: ['source', 'secret'] as const,
      registers: [registry],
    }),
    allowlist: new Counter({
      name: 'webhook_allowlist_checks_total',
      help: "Deliveries to a source with an address allowlist (ADDRESS_ALLOWLISTS), by where the client stood: inside the provider's published addresses, outside them, or unknown (no list read yet).",
      labelNames: ['source', 'verdict'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries by source and outcome (started, duplicate, or the problem type).',
      labelNames: ['source', 'outcome'] as const,
      registers: [registry],
    }),
    startSeconds: new Histogram({
      name: 'webhook_workflow_start_seconds',
      help: 'Time to record an event: its workflow started in Temporal (or refused as a duplicate) with ACKNOWLEDGE=temporal, its body and start committed to PostgreSQL with ACKNOWLEDGE=database.',
      labelNames: ['source'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The inbox's backlog, read once per scrape for its three gauges; while the database does not answer, they keep their last values. */
function backlogGauges(registry: Registry, backlog: () => Promise<Backlog>): void {
  let reading: Promise<Backlog | undefined> | undefined;
  const read = () =>
    (reading ??= backlog()
      .catch(() => undefined)
      .finally(() => setImmediate(() => (reading = undefined))));
  const gauge = (name: string, help: string, value: (found: Backlog) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const found = await read();
        if (found) this.set(value(found));
      },
    });
  gauge('webhook_start_backlog', 'Events committed to the body store whose workflow Temporal has not confirmed yet.', (found) => found.count);
  gauge(
    'webhook_start_dead_lettered',
    'Events whose start Temporal kept refusing: kept, not retried until durable-webhooks inbox retry.',
    (found) => found.deadLettered,
  );
  gauge(
    'webhook_start_backlog_oldest_seconds',
    'How long the oldest event not started yet has waited (0 when none waits).',
    (found) => found.oldestSeconds ?? 0,
  );
}

/** A gauge by its labels, read from the body store at each scrape; while it does not answer, the last values stay. */
function counts<Label extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly Label[],
  read: () => Promise<Array<Record<Label, string> & { count: number }>>,
): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const rows = await read().catch(() => undefined);
      if (!rows) return;
      this.reset();
      for (const row of rows) {
        const labels: Partial<Record<Label, string>> = {};
        for (const label of labelNames) labels[label] = row[label];
        this.set(labels, row.count);
      }
    },
  });
}

/** The receiver's `/metrics`, on its own server; resolves with it and where it listens (undefined: no port was free). */
export async function serveMetrics(metrics: Metrics, address: string, logger: Logger): Promise<{ server: Server; address: string | undefined }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Metrics are at /metrics.\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  const bound = await listenForMetrics(
    address,
    logger,
    (host, port) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
  );
  const port = bound && (server.address() as AddressInfo).port;
  return { server, address: bound && `${bound.slice(0, bound.lastIndexOf(':'))}:${port}` };
}
