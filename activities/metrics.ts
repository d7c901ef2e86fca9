import { metricMeter } from '@temporalio/activity';

/**
 * Our business counters. They go through the activity's metric meter, so they are served on the
 * worker's Prometheus endpoint (WORKER_METRICS_ADDRESS) beside the SDK's own, with its task queue,
 * namespace and activity type as labels.
 */
const COUNTERS = {
  charges: { name: 'durable_webhooks_charges', description: 'Charges made through Stripe, by outcome (succeeded, declined)' },
  emails: { name: 'durable_webhooks_emails_sent', description: 'Emails handed to the email provider' },
  duplicates: {
    name: 'durable_webhooks_ledger_duplicates',
    description: 'Events the ledger caught after Temporal had forgotten them, by kind (duplicate, replay)',
  },
  deliveries: { name: 'durable_webhooks_deliveries', description: 'Outbound /v1 delivery attempts, by outcome' },
} as const;

export function count(counter: keyof typeof COUNTERS, tags: Record<string, string> = {}): void {
  const { name, description } = COUNTERS[counter];
  metricMeter.createCounter(name, '1', description).add(1, tags);
}
