import type { Client } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type Stripe from 'stripe';
import type { Database } from '../src/db/database';
import type { EmailSender } from '../src/email/sender';
import { createDeliveryActivities } from './delivery';
import { createEmailActivities } from './email';
import { createLedgerActivities } from './ledger';
import { createOrderActivities } from './orders';
import { createStripeActivities } from './stripe';
import { createSubscriptionActivities } from './subscriptions';

/** The business settings workflows read through an activity, so their values are in history. */
export interface FlowSettings {
  /** Orders at or above this amount (minor units) wait for approval; none when unset. */
  reviewThreshold: number | null;
  /** How long a held order waits for `approve` or `reject`, as a Temporal duration string. */
  reviewTimeout: Duration;
  /** Who gets GitHub notifications; none when unset. */
  notifyEmail: string | null;
}

export interface ActivityDeps {
  db: Database;
  stripe: Stripe;
  email: EmailSender;
  temporal: Client;
  taskQueue: string;
  settings: FlowSettings;
  /** Lets outbound deliveries reach loopback and private addresses (tests, local development). */
  allowPrivateEndpoints: boolean;
}

/**
 * The worker's activities, one area per file, created from injected clients so tests can point
 * them anywhere.
 */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createLedgerActivities(deps),
    ...createOrderActivities(deps),
    ...createStripeActivities(deps),
    ...createEmailActivities(deps),
    ...createSubscriptionActivities(deps),
    ...createDeliveryActivities({ db: deps.db, allowPrivateEndpoints: deps.allowPrivateEndpoints }),
    async flowSettings(): Promise<FlowSettings> {
      return deps.settings;
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
