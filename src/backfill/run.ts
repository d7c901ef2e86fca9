import type { Client } from '@temporalio/client';
import { ProviderKind } from '../../contracts';
import type { CommonConfig } from '../config';
import type { SourceConfig } from '../providers/source';
import type { Queryable } from '../db/database';
import { OperationRejectedError } from '../core/errors';
import { createSource, type Source } from '../providers/registry';
import { createStripeClient } from '../core/stripe-client';
import { EventIntake } from '../intake/starter';
import { workflowExists } from '../temporal/availability';
import { backfill, type BackfillCounts, type BackfillDeps, type BackfillLine, type ListedEvent } from './backfill';
import { createGitHubClient, gitHubDeliveries } from './github';
import { paddleEvents } from './paddle';
import { SQUARE_EVENT_RETENTION_DAYS, squareEvents } from './square';
import { STRIPE_EVENT_RETENTION_DAYS, stripeEvents } from './stripe';

/** One backfill as the CLI and `POST /admin/backfill` ask for it. */
export interface BackfillRequest {
  provider: 'stripe' | 'github' | 'paddle' | 'square';
  /** Stripe only: a Stripe source from WEBHOOKS_CONFIG (its prefix and `apiKeyEnv`); the built-in `stripe` by default. */
  source?: string;
  since: Date;
  until?: Date;
  /** Stripe, Paddle and Square: these event types. */
  types?: string[];
  mode: NonNullable<BackfillDeps['mode']>;
}

/**
 * What makes a request impossible whoever runs it: redelivery from a provider other than GitHub, a
 * window the provider no longer keeps. Keys and hooks are the runner's to check.
 * @throws OperationRejectedError
 */
export function checkBackfillRequest(request: Pick<BackfillRequest, 'provider' | 'since' | 'mode'>): void {
  if (request.mode === 'redeliver' && request.provider !== 'github') throw new OperationRejectedError('Only GitHub redelivers; "redeliver" is for github.');
  if (request.provider === 'stripe' && Date.now() - request.since.getTime() > STRIPE_EVENT_RETENTION_DAYS * 86_400_000) {
    throw new OperationRejectedError(`"since" reaches further back than the ${STRIPE_EVENT_RETENTION_DAYS} days Stripe keeps events.`);
  }
  if (request.provider === 'square' && Date.now() - request.since.getTime() > SQUARE_EVENT_RETENTION_DAYS * 86_400_000) {
    throw new OperationRejectedError(`"since" reaches further back than the ${SQUARE_EVENT_RETENTION_DAYS} days Square's Events API searches.`);
  }
}

/**
 * Runs a backfill with the configured API settings (`STRIPE_SECRET_KEY`, `GITHUB_TOKEN`,
 * `GITHUB_HOOKS`, …) into the built-in source of the provider.
 * @throws OperationRejectedError for a request that cannot run (no key, a window Stripe does not keep)
 */
export async function runBackfill(
  request: BackfillRequest,
  {
    config,
    client,
    db,
    sources = [],
    from = (events) => events,
    counts,
  }: {
    config: CommonConfig;
    client: Client;
    db?: Queryable;
    sources?: readonly SourceConfig[];
    /** Narrows the listing (a resumed reconciliation skips what it settled). */
    from?: (events: AsyncIterable<ListedEvent>) => AsyncIterable<ListedEvent>;
    /** Counts to continue from. */
    counts?: BackfillCounts;
  },
  onLine?: (line: BackfillLine, counts: BackfillCounts) => void,
): Promise<BackfillCounts> {
  checkBackfillRequest(request);
  if (request.mode === 'start' && !db) throw new OperationRejectedError("A backfill stores each event's body before it starts the event: set DATABASE_URL.");
  const { source, stripeKey } = sourceOf(request, config, sources);
  return backfill(
    from(listing(request, config, source.name, stripeKey)),
    {
      source,
      starter: db && new EventIntake(client, db, { acknowledge: 'temporal', taskQueue: config.taskQueue }),
      exists: (workflowId) => workflowExists(client, workflowId),
      db,
      mode: request.mode,
      counts,
    },
    onLine,
  );
}

function listing(request: BackfillRequest, config: CommonConfig, sourceName: string, stripeKey: string | undefined): AsyncIterable<ListedEvent> {
  if (request.provider === 'stripe') {
    if (!stripeKey) {
      throw new OperationRejectedError(
        sourceName === 'stripe'
          ? 'A Stripe backfill needs STRIPE_SECRET_KEY (a restricted key that may read events is enough).'
          : `Source "${sourceName}" has no API key: give it "apiKeyEnv" in WEBHOOKS_CONFIG, and set that variable.`,
      );
    }
    return stripeEvents(createStripeClient(stripeKey, config.stripe.apiUrl), request, sourceName);
  }
  if (request.provider === 'paddle') {
    if (!config.paddle.apiKey) throw new OperationRejectedError('A Paddle backfill needs PADDLE_API_KEY (an API key with permission to read events).');
    return paddleEvents({ apiKey: config.paddle.apiKey, apiUrl: config.paddle.apiUrl }, request, sourceName);
  }
  if (request.provider === 'square') {
    if (!config.square.token) throw new OperationRejectedError('A Square backfill needs SQUARE_ACCESS_TOKEN (an access token that may read events).');
    return squareEvents({ token: config.square.token, apiUrl: config.square.apiUrl }, request, sourceName);
  }
  if (config.github.hooks.length === 0) {
    throw new OperationRejectedError(
      'A GitHub backfill needs GITHUB_HOOKS: the hooks to list, as repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>, separated by spaces.',
    );
  }
  if (!config.github.token)
    throw new OperationRejectedError('A GitHub backfill needs GITHUB_TOKEN (a token that may read the hooks: admin:repo_hook or admin:org_hook).');
  return gitHubDeliveries(createGitHubClient(config.github.token, config.github.apiUrl), config.github.hooks, request.since);
}

/**
 * The source events go to: the provider's built-in source (no workflow-ID prefix), or for Stripe a
 * source from WEBHOOKS_CONFIG, with its prefix and its own API key.
 */
function sourceOf(request: BackfillRequest, config: CommonConfig, sources: readonly SourceConfig[]): { source: Source; stripeKey?: string } {
  const name = request.source ?? request.provider;
  if (name === request.provider) {
    const kind = { stripe: ProviderKind.STRIPE, github: ProviderKind.GITHUB, paddle: ProviderKind.PADDLE, square: ProviderKind.SQUARE }[request.provider];
    // This adapter names the event's fields and verifies nothing (it has no secret); Square's also wants the URL it would verify.
    return {
      source: createSource({ name, kind, secrets: [], publicKeys: [], workflowIdPrefix: '', url: 'https://backfill.invalid/' }),
      stripeKey: config.stripe.secretKey,
    };
  }
  const found = sources.find((candidate) => candidate.name === name);
  if (request.provider !== 'stripe' || found?.kind !== ProviderKind.STRIPE)
    throw new OperationRejectedError(`No Stripe source named "${name}" in WEBHOOKS_CONFIG.`);
  return { source: createSource(found), stripeKey: found.apiKey };
}
