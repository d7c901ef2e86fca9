import type { Duration } from '@temporalio/common';
import type { EmailInput } from './email';
import type { ClaimResult, EventClaim, EventCompletion } from './events';
import type { DeliveryAttempt, DeliveryOutcome } from './messages';
import type { Charge, ChargeInput, MarkFulfilledInput, SavedOrder, SaveOrderInput } from './orders';
import type { BackfillCounts, BackfillInput, ReconcileProvider } from './reconcile';
import type { BulkFilter, BulkInput, BulkItemResult, RouteReplayInput, RouteReplayProgress } from './bulk';
import type { CustomerUpdate } from './customers';
import type { SubscriptionUpdate } from './subscriptions';
import type { Applied, CoalesceTimes, EntityOrder, StoredRequests, Turn, TurnAnswer, TurnDone, TurnRequest } from './entities';
import type { RefundInput } from './orders';
import type { RegisteredWait, WaiterRegistration, WaitState } from './waits';

/** Which entity: its flow, source and key. */
export interface EntityRef {
  flow: string;
  source: string;
  key: string;
}

/**
 * An event's request for its key's turn, with what its entity starts with if it is not running, and
 * the event's ID in the ledger (a route's subscriber has one of its own; absent from histories from before).
 */
export type TurnAsk = EntityRef & { order: EntityOrder; coalesce?: CoalesceTimes | null; request: TurnRequest; ledgerEventId?: string };

/** The business settings workflows read through an activity, so their values are in history. */
export interface FlowSettings {
  /** Orders at or above this amount (minor units) wait for approval; none when unset. */
  reviewThreshold: number | null;
  /** How long a held order waits for `approve` or `reject`, as a Temporal duration string. */
  reviewTimeout: Duration;
  /**
   * How long (ms) a declined order waits for `retryPayment`, from its first decline, before it ends
   * as declined; absent from settings recorded before payment retries (then the default, 7 days).
   */
  paymentRetryWindowMs?: number;
  /** Who gets GitHub notifications; none when unset. */
  notifyEmail: string | null;
}

/** PAYMENT_RETRY_WINDOW's default: 7 days. */
export const DEFAULT_PAYMENT_RETRY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Every activity the workflows call, by name, input and result. `activities/` implements it; the
 * workflows know only this.
 */
export interface Activities {
  /** The first activity of every event workflow: anything but `claimed` means the workflow does nothing. */
  claimEvent(claim: EventClaim): Promise<ClaimResult>;
  completeEvent(completion: EventCompletion): Promise<void>;
  flowSettings(): Promise<FlowSettings>;
  /** Writes the order and the step's ledger row in one transaction, once per step. */
  saveOrder(input: SaveOrderInput): Promise<SavedOrder>;
  /**
   * Makes one charge attempt off-session through Stripe with its own Idempotency-Key, recorded in
   * the ledger; returns the event's successful charge if it has one; throws `CardDeclined`.
   */
  chargeOrder(input: ChargeInput): Promise<Charge>;
  markPaymentIntentFulfilled(input: MarkFulfilledInput): Promise<void>;
  /** Sends once per event and step; throws `EmailRejected` when the provider refuses for good. */
  sendEmail(input: EmailInput): Promise<{ messageId: string }>;
  /**
   * Lists the provider's API since `since` and starts what the receiver never got, heartbeating its
   * progress; a retry after a crash resumes after the last event it settled.
   */
  reconcileProvider(input: { provider: ReconcileProvider; since: string } & Partial<Omit<BackfillInput, 'provider' | 'since'>>): Promise<BackfillCounts>;
  /**
   * Takes the key for the event when it is free (nothing holds it, nothing waits on it): the event
   * runs with no entity (`held`), and `turn` says whether it goes or is superseded. Otherwise
   * signal-with-start of the key's entity with the request (the entity starts from what the database
   * kept of the key), and a null turn: the event waits for its `turn` signal. Histories from before
   * hold turns the entity answered by update.
   */
  askTurn(input: TurnAsk): Promise<{ entityId: string; turn: TurnAnswer; held?: boolean }>;
  /**
   * How the event that had its turn ended. An event that held its key itself (`held`, its ask)
   * records it applied or parked and lets the key go, to the entity when events wait there or the
   * key is parked; an event that had its turn from the entity tells the entity (an entity that is
   * gone waits for nothing).
   */
  endTurn(input: { entityId: string; done: TurnDone; held?: TurnAsk }): Promise<void>;
  /**
   * The key's entity takes its key before it gives a turn: held, with what the key's holders kept
   * (the last event applied, the failed event it waits on), or the event holding it now (the key is
   * then marked handed off, and that event hands it over with `keyGiven` when it ends). `from`:
   * a holder whose workflow has ended without letting the key go.
   */
  takeKey(
    input: EntityRef & { from?: string },
  ): Promise<{ held: true; last: Applied | null; parked: (TurnRequest & { failure: string }) | null } | { held: false; holder: TurnRequest }>;
  /** The key's entity, with nothing left to run, lets its key go. */
  freeKey(ref: EntityRef): Promise<void>;
  /** Signal-with-start of the key's entity with the request, as events asked before `askTurn`: their histories replay through it. */
  requestTurn(input: TurnAsk): Promise<string>;
  /** What the database kept of a key, which a new entity starts from: the last event applied, and the failed event it waits on. */
  readEntity(ref: EntityRef): Promise<{ last: Applied | null; parked: (TurnRequest & { failure: string }) | null }>;
  /**
   * Keeps what the entity knows in the database, where it outlives the entity's runs: the last event
   * applied (and its lag, from `receivedAt`, in the worker's metrics), or the failed event the key waits on.
   */
  recordEntity(input: EntityRef & { applied?: Applied; receivedAt?: string; parked?: (TurnRequest & { failure: string }) | null }): Promise<void>;
  /**
   * Keeps a `serial` key's requests beyond what the entity's run carries in the database (a request
   * kept already, or handed back before, waits there again), and answers how many wait there now.
   */
  storeWaiting(input: EntityRef & { requests: TurnRequest[] }): Promise<number>;
  /**
   * Hands the `count` oldest requests kept in the database back to the entity, marked with `take`
   * (the same take asked again answers the same), and forgets those an earlier take handed back:
   * what is left, and its oldest.
   */
  takeWaiting(input: EntityRef & { count: number; take: string }): Promise<{ requests: TurnRequest[]; stored: StoredRequests | null }>;
  /** Whether the event's workflow is still open (false once it ended, however it ended, or is gone). */
  eventWorkflowOpen(workflowId: string): Promise<boolean>;
  /**
   * Moves the event's workflow to the entity's task priority (`ENTITY_PRIORITY`): every event waiting
   * on its key waits for it, so its tasks go before theirs. An event that is gone needs nothing.
   */
  putFirst(workflowId: string): Promise<void>;
  /**
   * Sends each event its turn (`turn` signal), from the worker: whether each event's workflow was
   * still there to take it. Sent again (a retry), an event keeps the first it took.
   */
  giveTurns(answers: Array<{ workflowId: string; turn: Turn }>): Promise<boolean[]>;
  /**
   * Records a flow's wait for another event, until its timeout from now, then gives it the first
   * stored event that matches, if one came before (docs/flows.md#wait-for-another-event); run again,
   * it answers what it recorded, and the time left.
   */
  registerWaiter(registration: WaiterRegistration): Promise<RegisteredWait>;
  /** The wait's time is up: stops it, unless an event matched it first (then that event). */
  closeWaiter(input: { workflowId: string; wait: string }): Promise<WaitState>;
  /** Records a refund against its order, once per step of the waiting event. */
  recordRefund(input: RefundInput): Promise<void>;
  /** Stores the customer if this update is newer than the stored one; false when it is not. */
  storeCustomer(update: CustomerUpdate): Promise<boolean>;
  /** Fetches a thin event's customer from Stripe as it is now and stores it if this event is newer than the one stored; false when it is not. */
  storeCurrentCustomer(input: { source: string; eventId: string; created: number }): Promise<boolean>;
  /** Signal-with-start of the subscription's entity workflow; returns its workflow ID. */
  forwardSubscriptionUpdate(update: SubscriptionUpdate): Promise<string>;
  /** Stores the subscription if this update is newer than the stored one; false when it is not. Its body may then go at retention. */
  storeSubscription(update: SubscriptionUpdate): Promise<boolean>;
  /** An update the entity skips as older than the last one applied: its body may go at retention. */
  skipSubscriptionUpdate(update: SubscriptionUpdate): Promise<void>;
  /** One signed POST to an endpoint, recorded. */
  attemptDelivery(input: DeliveryAttempt): Promise<DeliveryOutcome>;
  /** The event IDs a bulk job's filter matches now (their current runs), at most `limit`. */
  bulkMatches(input: { filter: BulkFilter; limit: number }): Promise<string[]>;
  /**
   * A bulk job's action on each of these events, skipping those it must not touch (a retry of a
   * completed event); heartbeats after each, so a retry resumes after the last one done.
   */
  bulkApply(input: Omit<BulkInput, 'filter' | 'rate'> & { jobId: string; eventIds: string[] }): Promise<BulkItemResult[]>;
  /**
   * Reads the next `limit` stored events of a route replay after `after`, and starts the flow for
   * each its routes send there and it has not run for; heartbeats each result, so a retry goes on
   * after the last one. `last`: the last event read (null: none left).
   */
  replayRouteBatch(
    input: Omit<RouteReplayInput, 'rate' | 'by'> & { after: RouteReplayProgress['after']; limit: number },
  ): Promise<{ results: BulkItemResult[]; last: RouteReplayProgress['after'] }>;
}
