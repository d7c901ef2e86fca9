import { defineQuery, defineSignal } from '@temporalio/workflow';
import { INTERNAL_WORKFLOW_ID_PREFIX } from './events';

/** One Stripe subscription event, as the entity workflow applies it. */
export interface SubscriptionUpdate {
  eventId: string;
  /** The event's `created`, seconds: with the event ID, it orders updates. */
  created: number;
  subscription: { id: string; customer?: string | null; status: string } & Record<string, unknown>;
  deleted: boolean;
}

export interface SubscriptionState {
  subscriptionId: string;
  /** The newest update applied: its event's `created` and ID. */
  last: { created: number; eventId: string } | null;
  status: string | null;
  /** Updates received by this run, applied or ignored. */
  updatesSeen: number;
}

export interface SubscriptionEntityInput {
  subscriptionId: string;
  /** Carried over by continue-as-new. */
  last?: SubscriptionState['last'];
}

export const applySignal = defineSignal<[SubscriptionUpdate]>('apply');
export const subscriptionStateQuery = defineQuery<SubscriptionState>('state');

/** The entity workflow for one subscription; events about it are applied there, in order. */
export const subscriptionWorkflowId = (subscriptionId: string) => `${INTERNAL_WORKFLOW_ID_PREFIX}subscription:${subscriptionId}`;
