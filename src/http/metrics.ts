import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Backlog } from '../db/inbox';

/** The receiver's Prometheus metrics, on a registry of its own (one per app); the inbox's backlog read at each scrape. */
export function createMetrics(backlog?: () => Promise<Backlog>) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  if (backlog) {
    // One query per scrape serves both gauges; while the database does not answer, they keep their last values.
    let reading: Promise<Backlog | undefined> | undefined;
    const read = () => (reading ??= backlog().catch(() => undefined).finally(() => setImmediate(() => (reading = undefined))));
    new Gauge({
      name: 'webhook_start_backlog',
      help: 'Events committed to the body store whose workflow Temporal has not confirmed yet.',
      registers: [registry],
      async collect() {
        const found = await read();
        if (found) this.set(found.count);
      },
    });
    new Gauge({
      name: 'webhook_start_backlog_oldest_seconds',
      help: 'How long the oldest event not started yet has waited (0 when none waits).',
      registers: [registry],
      async collect() {
        const found = await read();
        if (found) this.set(found.oldestSeconds ?? 0);
      },
    });
  }
  return {
    registry,
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook deliveries by source and outcome (started, duplicate, or the problem type).',
      labelNames: ['source', 'outcome'] as const,
      registers: [registry],
    }),
    startSeconds: new Histogram({
      name: 'webhook_workflow_start_seconds',
      help: 'Time to get Temporal to record (or refuse as duplicate) an event workflow.',
      labelNames: ['source'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
