import { retry } from '@octokit/plugin-retry';
import { Octokit } from '@octokit/rest';
import { createLogger } from '../core/logger';
import { readGitHubEvent } from '../providers/github';
import { ProviderApiError } from '../core/errors';
import type { ListedEvent } from './backfill';

const RetryingOctokit = Octokit.plugin(retry);
const githubLog = createLogger('github-api', { to: 'stderr' });

/**
 * The GitHub REST client: GITHUB_TOKEN and GITHUB_API_URL (default the public API), with
 * `@octokit/plugin-retry`: a 429 or 5xx is retried with backoff (the same page, so the cursor
 * holds); 401, 403 and 404 are not.
 */
export function createGitHubClient(token: string, apiUrl = 'https://api.github.com', options: { retryAfterBaseValue?: number } = {}): Octokit {
  const octokit = new RetryingOctokit({
    auth: token,
    baseUrl: apiUrl.replace(/\/$/, ''),
    userAgent: 'durable-webhooks',
    retry: { retries: 4, retryAfterBaseValue: options.retryAfterBaseValue ?? 1000 },
    // Octokit's own lines (a refused request) as ours: JSON on stderr, like every line we write.
    log: {
      debug: () => undefined,
      info: () => undefined,
      warn: (message: string) => githubLog.warn(message),
      error: (message: string) => githubLog.error(message),
    },
  });
  // Pagination follows the Link header's absolute URLs, with the token: never to another host.
  const api = new URL(apiUrl);
  octokit.hook.before('request', (request) => {
    const target = new URL(request.url.startsWith('/') ? `${request.baseUrl}${request.url}` : request.url);
    if (target.origin !== api.origin)
      throw new ProviderApiError(`GitHub's API sent a link to ${target.origin}, not ${api.origin} (GITHUB_API_URL); it is not followed with the token.`);
  });
  return octokit;
}

interface DeliverySummary {
  id: number;
  guid: string;
  delivered_at: string;
  event: string;
  action: string | null;
}

interface DeliveryDetail extends DeliverySummary {
  request: { headers: Record<string, string> | null; payload: Record<string, unknown> | null };
}

/**
 * Every delivery GUID of the hooks since `since`, newest first (GitHub lists deliveries newest first,
 * with cursor pagination in its Link headers), each GUID once however often it was redelivered.
 * https://docs.github.com/en/rest/repos/webhooks#list-deliveries-for-a-repository-webhook
 */
export async function* gitHubDeliveries(octokit: Octokit, hooks: readonly string[], since: Date): AsyncGenerator<ListedEvent> {
  for (const hook of hooks) {
    const seen = new Set<string>();
    const pages = octokit.paginate.iterator(`GET /${hook}/deliveries`, { per_page: 100 });
    try {
      for await (const page of pages) {
        const deliveries = page.data as unknown as DeliverySummary[];
        for (const delivery of deliveries) {
          const deliveredAt = new Date(delivery.delivered_at);
          if (deliveredAt < since) return;
          if (seen.has(delivery.guid)) continue;
          seen.add(delivery.guid);
          yield {
            id: delivery.guid,
            type: delivery.action ? `${delivery.event}.${delivery.action}` : delivery.event,
            // The delivery's request as GitHub sent it: headers and payload, read as the receiver would.
            read: async () => {
              const { data } = await call(() => octokit.request(`GET /${hook}/deliveries/${delivery.id}`));
              const detail = data as unknown as DeliveryDetail;
              const event = detail.request.headers?.['X-GitHub-Event'] ?? detail.event;
              return readGitHubEvent({ id: detail.guid, event, payload: detail.request.payload ?? {}, occurredAt: new Date(detail.delivered_at) });
            },
            // GitHub delivers it again, signed, to the hook's URL.
            redeliver: async () => {
              await call(() => octokit.request(`POST /${hook}/deliveries/${delivery.id}/attempts`));
            },
          };
        }
      }
    } catch (error) {
      throw describeFailure(error, hook);
    }
  }
}

async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw describeFailure(error);
  }
}

function describeFailure(error: unknown, hook?: string): Error {
  if (error instanceof ProviderApiError || !(error instanceof Error)) return error as Error;
  const status = (error as { status?: number }).status;
  const where = hook ? ` for ${hook}` : '';
  if (status === 401) return new ProviderApiError(`GitHub refused the token (GITHUB_TOKEN)${where}: ${(error as Error).message}`);
  if (status === 403 || status === 404)
    return new ProviderApiError(
      `GitHub answered ${status}${where}: the token needs admin:repo_hook (or admin:org_hook) on that hook, and the hook must exist.`,
    );
  return error as Error;
}
