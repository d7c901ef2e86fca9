import type { Duration } from '@temporalio/common';
import { ProviderKind, type FlowSettings } from '../../contracts';
import type { Retention } from '../db/retention';
import { ConfigError } from '../core/errors';
import { loadCommonConfig, metricsAddressOf, type CommonConfig, type LoadOptions } from './common';
import { positiveDurationMs, positiveInteger, retentionMs } from '../core/env';
import type { SourceConfig } from '../providers/source';
import { loadSources } from './sources';

/** The worker's configuration: the APIs its activities call, its versioning, its retention. */

/** The worker's settings: the common ones and what its activities call; it never reads the receiver's sources. */
export interface WorkerConfig extends CommonConfig {
  email:
    | { provider: 'resend'; from: string; apiKey: string; baseUrl: string | undefined }
    | { provider: 'smtp'; from: string; url: string }
    | { provider: 'capture'; from: string };
  settings: FlowSettings;
  /** `host:port` of the worker's Prometheus metrics (the SDK's and ours); undefined when set empty. @default 127.0.0.1:9464 */
  metricsAddress: string | undefined;
  /**
   * The Worker Deployment Version this worker is (WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID): with one,
   * it takes only tasks routed to its build (docs/deploys.md); without, it is unversioned.
   */
  deployment: WorkerDeployment | undefined;
  /** How long the body store keeps bodies (BODY_RETENTION) and the rows that find duplicates (DEDUPE_RETENTION). */
  retention: Retention;
  /**
   * The Stripe sources of WEBHOOKS_CONFIG (with their API keys), read only when a backfill into one
   * of them runs: the worker does not read the sources file to start.
   */
  stripeSources: () => SourceConfig[];
}

export interface WorkerDeployment {
  name: string;
  buildId: string;
}

export const DEFAULT_WORKER_METRICS_ADDRESS = '127.0.0.1:9464';
export const DEFAULT_WORKER_DEPLOYMENT_NAME = 'durable-webhooks';

/**
 * WORKER_BUILD_ID (the image tag, say) makes the worker a version of the deployment
 * WORKER_DEPLOYMENT_NAME. Temporal names a version `<deployment>.<build ID>`, so the name has no dot.
 */
export function workerDeploymentOf(env: NodeJS.ProcessEnv): WorkerDeployment | undefined {
  const buildId = env.WORKER_BUILD_ID?.trim();
  if (!buildId) {
    if (env.WORKER_DEPLOYMENT_NAME)
      throw new ConfigError('WORKER_DEPLOYMENT_NAME needs WORKER_BUILD_ID: set the build ID (the image tag, say) to version this worker, or neither.');
    return undefined;
  }
  const name = env.WORKER_DEPLOYMENT_NAME || DEFAULT_WORKER_DEPLOYMENT_NAME;
  if (!/^[\w-]{1,200}$/.test(name))
    throw new ConfigError(
      `WORKER_DEPLOYMENT_NAME must be letters, digits, "-" and "_" (no dot: Temporal writes a version as <deployment>.<build ID>), not "${name}".`,
    );
  if (!/^[\w.+-]{1,200}$/.test(buildId))
    throw new ConfigError(`WORKER_BUILD_ID must be letters, digits, ".", "+", "-" and "_" (an image tag or a commit, say), not "${buildId}".`);
  return { name, buildId };
}

export const DEFAULT_EMAIL_FROM = 'durable-webhooks <webhooks@example.com>';

/** The worker's settings; only `development` may capture email to files instead of sending it. */
export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env, { development = false }: LoadOptions = {}): WorkerConfig {
  const from = env.EMAIL_FROM || DEFAULT_EMAIL_FROM;
  const provider = env.EMAIL_PROVIDER || (development ? 'capture' : '');
  let email: WorkerConfig['email'];
  if (provider === 'resend') {
    if (!env.RESEND_API_KEY) throw new ConfigError('EMAIL_PROVIDER=resend needs RESEND_API_KEY.');
    email = { provider, from, apiKey: env.RESEND_API_KEY, baseUrl: env.RESEND_BASE_URL || undefined };
  } else if (provider === 'smtp') {
    if (!env.SMTP_URL) throw new ConfigError('EMAIL_PROVIDER=smtp needs SMTP_URL (smtp://user:pass@host:port).');
    email = { provider, from, url: env.SMTP_URL };
  } else if (provider === 'capture' && development) {
    email = { provider, from };
  } else {
    throw new ConfigError(`EMAIL_PROVIDER must be resend or smtp${development ? ' (or capture)' : ''}, not "${provider}".`);
  }

  const reviewTimeout = env.REVIEW_TIMEOUT || '24h';
  positiveDurationMs(env, 'REVIEW_TIMEOUT', '24h');

  const retention = { bodyMs: retentionMs(env, 'BODY_RETENTION', '30d'), dedupeMs: retentionMs(env, 'DEDUPE_RETENTION', '400d') };
  if (retention.dedupeMs !== null && (retention.bodyMs === null || retention.dedupeMs < retention.bodyMs)) {
    throw new ConfigError('DEDUPE_RETENTION must be at least BODY_RETENTION: a row that finds duplicates outlives the body it stores.');
  }

  return {
    ...loadCommonConfig(env, { development }),
    email,
    retention,
    metricsAddress: metricsAddressOf(env, 'WORKER_METRICS_ADDRESS', DEFAULT_WORKER_METRICS_ADDRESS),
    deployment: workerDeploymentOf(env),
    stripeSources: () => loadSources(env, { development, port: 0 }).sources.filter((source) => source.kind === ProviderKind.STRIPE),
    settings: {
      reviewThreshold: env.REVIEW_THRESHOLD ? positiveInteger(env, 'REVIEW_THRESHOLD', 0) : null,
      reviewTimeout: reviewTimeout as Duration,
      paymentRetryWindowMs: positiveDurationMs(env, 'PAYMENT_RETRY_WINDOW', '7d'),
      notifyEmail: env.NOTIFY_EMAIL || null,
    },
  };
}
