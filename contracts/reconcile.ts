/** What one backfill or reconciliation run found and did. */
export interface BackfillCounts {
  found: number;
  alreadyRecorded: number;
  /** Started, or in a dry run would start, or redelivery requested. */
  started: number;
  failed: number;
}

export type ReconcileProvider = 'stripe' | 'github' | 'paddle' | 'square';

/** The input of each scheduled reconciliation run: which provider, and how far back to look. */
export interface ReconcileInput {
  provider: ReconcileProvider;
  lookbackMs: number;
}

/**
 * One backfill an operator asked for (`POST /admin/backfill`), run as a workflow by the worker:
 * the provider, the source events go to, the window (ISO 8601), the types, and what to do.
 */
export interface BackfillInput {
  provider: ReconcileProvider;
  /** A Stripe source from WEBHOOKS_CONFIG (the worker needs it too); the provider's built-in source otherwise. */
  source?: string;
  since: string;
  until?: string;
  types?: string[];
  mode: 'start' | 'dry-run' | 'redeliver';
}

/** A source's backfill workflow: one ID per source, so one runs at a time. */
export const backfillWorkflowId = (source: string) => `durable-webhooks:backfill:${source}`;

/** The schedule of a provider's reconciliation, as operators see it in the Temporal UI. */
export const reconcileScheduleId = (provider: ReconcileProvider) => `reconcile-${provider}`;
