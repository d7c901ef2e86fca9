import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The receiver's Prometheus metrics, on a registry of its own (one per app). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
