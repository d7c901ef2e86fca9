import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ProviderKind } from '../../contracts';
import type { CommonConfig } from '../config';
import type { Queryable } from '../db/database';
import { OperationRejectedError } from '../errors';
import { createAdapter, type Source } from '../providers/registry';
import { createStripeClient } from '../stripe-client';
import { TemporalEventStarter } from '../temporal/start-event';
import { backfill, type BackfillCounts, type BackfillDeps, type BackfillLine, type ListedEvent } from './backfill';
import { createGitHubClient, gitHubDeliveries } from './github';
import { STRIPE_EVENT_RETENTION_DAYS, stripeEvents } from './stripe';

/** One backfill as the CLI and `POST /admin/backfill` ask for it. */
export interface BackfillRequest {
  provider: 'stripe' | 'github';
  since: Date;
  until?: Date;
  /** Stripe only: these event types. */
  types?: string[];
  mode: NonNullable<BackfillDeps['mode']>;
}

/**
 * Runs a backfill with the configured API settings (`STRIPE_SECRET_KEY`, `GITHUB_TOKEN`,
 * `GITHUB_HOOKS`, …) into the built-in source of the provider.
 * @throws OperationRejectedError for a request that cannot run (no key, a window Stripe does not keep)
 */
export async function runBackfill(
  request: BackfillRequest,
  { config, client, db, from = (events) => events }: { config: CommonConfig; client: Client; db?: Queryable; from?: (events: AsyncIterable<ListedEvent>) => AsyncIterable<ListedEvent> },
  onLine?: (line: BackfillLine) => void,
): Promise<BackfillCounts> {
  if (request.mode === 'redeliver' && request.provider !== 'github') throw new OperationRejectedError('Only GitHub redelivers; "redeliver" is for github.');
  const source = builtInSource(request.provider);
  return backfill(
    from(listing(request, config)),
    { source, starter: new TemporalEventStarter(client, { taskQueue: config.taskQueue }), exists: (workflowId) => exists(client, workflowId), db, mode: request.mode },
    onLine,
  );
}

function listing(request: BackfillRequest, config: CommonConfig): AsyncIterable<ListedEvent> {
  if (request.provider === 'stripe') {
    if (Date.now() - request.since.getTime() > STRIPE_EVENT_RETENTION_DAYS * 86_400_000) {
      throw new OperationRejectedError(`"since" reaches further back than the ${STRIPE_EVENT_RETENTION_DAYS} days Stripe keeps events.`);
    }
    if (!config.stripe.secretKey) throw new OperationRejectedError('A Stripe backfill needs STRIPE_SECRET_KEY (a restricted key that may read events is enough).');
    return stripeEvents(createStripeClient(config.stripe.secretKey, config.stripe.apiUrl), request, 'stripe');
  }
  if (config.github.hooks.length === 0) {
    throw new OperationRejectedError('A GitHub backfill needs GITHUB_HOOKS: the hooks to list, as repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>, separated by spaces.');
  }
  if (!config.github.token) throw new OperationRejectedError('A GitHub backfill needs GITHUB_TOKEN (a token that may read the hooks: admin:repo_hook or admin:org_hook).');
  return gitHubDeliveries(createGitHubClient(config.github.token, config.github.apiUrl), config.github.hooks, request.since);
}

/** The built-in source of a provider: its name, no workflow-ID prefix, and its adapter's checks. */
function builtInSource(provider: BackfillRequest['provider']): Source {
  const kind = provider === 'stripe' ? ProviderKind.STRIPE : ProviderKind.GITHUB;
  return { name: provider, workflowIdPrefix: '', adapter: createAdapter({ name: provider, kind, secrets: [], publicKeys: [], workflowIdPrefix: '' }) };
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** `72h`, `30m`, `7d` back from `now`, or an ISO 8601 time. */
export function pointInTime(value: string, field: string, now = new Date()): Date {
  const relative = /^(\d+)(m|h|d)$/.exec(value);
  if (relative) return new Date(now.getTime() - Number(relative[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as 'm' | 'h' | 'd']);
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw new OperationRejectedError(`"${field}" must be a duration (30m, 72h, 7d) or an ISO 8601 time, not "${value}".`);
  return time;
}
