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

/** The schedule of a provider's reconciliation, as operators see it in the Temporal UI. */
export const reconcileScheduleId = (provider: ReconcileProvider) => `reconcile-${provider}`;
