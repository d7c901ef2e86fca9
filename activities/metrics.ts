import { metricMeter } from '@temporalio/activity';

/**
 * Our business counters and histograms. They go through the activity's metric meter, so they are served on the
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
  turnRequests: {
    name: 'durable_webhooks_entity_turn_requests',
    description:
      "Keyed flows' requests for their key's turn, by flow and how they had it: key (the key was free, taken with no entity) or entity (waited in the key's entity)",
  },
  entitySignalsFailed: {
    name: 'durable_webhooks_entity_signals_failed',
    description:
      "Signals to a key's entity that failed, by flow and signal (requestTurn, keyGiven, turnDone): the server refused them (a run past its signal limit, or closing) or was out of reach. Their activity retries them; a count that keeps rising is a key making no progress",
  },
} as const;

export function count(counter: keyof typeof COUNTERS, tags: Record<string, string> = {}): void {
  const { name, description } = COUNTERS[counter];
  metricMeter.createCounter(name, '1', description).add(1, tags);
}

const HISTOGRAMS = {
  keyLag: {
    name: 'durable_webhooks_key_lag',
    unit: 'ms',
    description: "Keyed flows' events, from the receiver taking the event to its key's entity recording it applied, by flow",
  },
} as const;

/** Records one value of a histogram, served beside the counters. */
export function observe(histogram: keyof typeof HISTOGRAMS, value: number, tags: Record<string, string> = {}): void {
  const { name, unit, description } = HISTOGRAMS[histogram];
  metricMeter.createHistogram(name, 'int', unit, description).record(Math.max(0, Math.round(value)), tags);
}
