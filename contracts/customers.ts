/** A Stripe customer's state from one event, as `syncStripeCustomer` stores it. */
export interface CustomerUpdate {
  eventId: string;
  source: string;
  /** The event's `created`, seconds: with the event ID, it orders updates. */
  created: number;
  /** Its balance in minor units (negative: credit), currency and standing, as Stripe's customer object has them. */
  customer: { id: string; balance: number | null; currency: string | null; delinquent: boolean };
  deleted: boolean;
}
