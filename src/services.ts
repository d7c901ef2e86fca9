import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Activities } from '../contracts';
import { createActivities } from '../activities';
import { ConfigError } from './core/errors';
import type { WorkerConfig } from './config';
import { embeddedDatabaseDir, openDatabase, type Database } from './db/database';
import { migrate } from './db/migrations';
import { STRIPE_STAND_IN_KEY } from './dev/stripe-stand-in';
import { createStripeClient } from './core/stripe-client';
import { captureSender, resendSender, smtpSender, type EmailSender } from './email/sender';

export interface WorkerServices {
  db: Database;
  activities: Activities;
  /** One line per downstream, for banners and logs: what is live and what is a stand-in. */
  describe(): string[];
  close(): Promise<void>;
}

/**
 * Builds what the activities use from the worker's configuration, and migrates the database.
 * Without DATABASE_URL, `embedded` allows the embedded PostgreSQL under DATA_DIR (`npm run dev` alone passes it);
 * `stripeStandIn` names a local stand-in used when no STRIPE_SECRET_KEY is set.
 */
export async function createWorkerServices(
  config: WorkerConfig,
  options: { temporal: Client; embedded?: boolean; stripeStandIn?: string },
): Promise<WorkerServices> {
  const { databaseUrl, dataDir, taskQueue } = config;
  if (!databaseUrl && !options.embedded) {
    throw new ConfigError('DATABASE_URL is required when the worker runs on its own (npm run dev uses an embedded database in its one process).');
  }
  const stripeKey = config.stripe.secretKey ?? (options.stripeStandIn ? STRIPE_STAND_IN_KEY : undefined);
  const stripeUrl = config.stripe.secretKey ? config.stripe.apiUrl : (options.stripeStandIn ?? config.stripe.apiUrl);
  if (!stripeKey) throw new ConfigError('STRIPE_SECRET_KEY is required (npm run dev uses a local Stripe stand-in when it is unset).');

  const db = await openDatabase({ url: databaseUrl, embeddedDir: embeddedDatabaseDir(dataDir) });
  await migrate(db);
  const email = createEmailSender(config.email, path.join(dataDir, 'mail'));
  const stripe = createStripeClient(stripeKey, stripeUrl);
  const activities = createActivities({
    db,
    stripe,
    email,
    temporal: options.temporal,
    taskQueue,
    settings: config.settings,
    allowPrivateEndpoints: config.allowPrivateEndpoints,
    // Reconciliation lists the Stripe the charges go to: the local stand-in in development.
    config: { ...config, stripe: { secretKey: stripeKey, apiUrl: stripeUrl } },
    stripeSources: config.stripeSources,
  });

  return {
    db,
    activities,
    describe: () => [
      `Database     ${db.kind === 'embedded' ? `embedded PostgreSQL in ${embeddedDatabaseDir(dataDir)}, on ${new URL(db.url!).host} (the CLI finds it)` : 'PostgreSQL (DATABASE_URL)'}`,
      `Stripe       ${config.stripe.secretKey ? `live API${stripeUrl ? ` at ${stripeUrl}` : ''}` : `local stand-in at ${stripeUrl} (set STRIPE_SECRET_KEY for Stripe)`}`,
      `Email        ${email.description}`,
    ],
    close: () => db.close(),
  };
}

function createEmailSender(config: WorkerConfig['email'], captureDir: string): EmailSender {
  switch (config.provider) {
    case 'resend':
      return resendSender({ apiKey: config.apiKey, from: config.from, baseUrl: config.baseUrl });
    case 'smtp':
      return smtpSender({ url: config.url, from: config.from });
    case 'capture':
      return captureSender({ dir: captureDir, from: config.from });
  }
}
