import type { Client } from '@temporalio/client';
import type Stripe from 'stripe';
import type { Activities, FlowSettings } from '../contracts';
import type { Database } from '../src/db/database';
import type { EmailSender } from '../src/email/sender';
import { createDeliveryActivities } from './delivery';
import { createEmailActivities } from './email';
import { createEntityActivities } from './entities';
import { createLedgerActivities } from './ledger';
import { createOrderActivities } from './orders';
import { createStripeActivities } from './stripe';
import { createCustomerActivities } from './customers';
import { createSubscriptionActivities } from './subscriptions';
import { createReconcileActivities } from './reconcile';
import { createBulkActivities } from './bulk';
import { createWaitActivities } from './waits';
import type { CommonConfig } from '../src/config';
import type { SourceConfig } from '../src/providers/source';

export interface ActivityDeps {
  db: Database;
  stripe: Stripe;
  email: EmailSender;
  temporal: Client;
  taskQueue: string;
  settings: FlowSettings;
  /** Lets outbound deliveries reach loopback and private addresses (tests, local development). */
  allowPrivateEndpoints: boolean;
  /** The providers' API settings and task queue, for reconciliation. */
  config: CommonConfig;
  /** Stripe sources of WEBHOOKS_CONFIG a backfill may go to, read when one does. */
  stripeSources?: () => readonly SourceConfig[];
}

/**
 * The worker's activities, one area per file, created from injected clients so tests can point
 * them anywhere. They implement the contracts' `Activities`, which is all the workflows know.
 */
export function createActivities(deps: ActivityDeps): Activities {
  return {
    ...createLedgerActivities(deps),
    ...createOrderActivities(deps),
    ...createStripeActivities(deps),
    ...createEmailActivities(deps),
    ...createSubscriptionActivities(deps),
    ...createCustomerActivities(deps),
    ...createEntityActivities(deps),
    ...createDeliveryActivities({ db: deps.db, allowPrivateEndpoints: deps.allowPrivateEndpoints }),
    ...createReconcileActivities({ db: deps.db, temporal: deps.temporal, config: deps.config, sources: deps.stripeSources }),
    ...createBulkActivities({ db: deps.db, temporal: deps.temporal, taskQueue: deps.taskQueue }),
    ...createWaitActivities({ db: deps.db }),
    flowSettings: async () => deps.settings,
  };
}
