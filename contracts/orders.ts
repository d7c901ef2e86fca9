import { defineSignal } from '@temporalio/workflow';
import type { BodyField, BodyStep } from './events';

/** An operator's decision on a held order. */
export const approveSignal = defineSignal<[{ by?: string }?]>('approve');
export const rejectSignal = defineSignal<[{ by?: string; reason?: string }?]>('reject');

export interface Order {
  id: string;
  status: 'received' | 'awaiting_review' | 'paid' | 'payment_failed' | 'cancelled' | 'fulfilled';
  customerEmail: string | null;
  amount: number | null;
  currency: string | null;
  paymentIntentId?: string | null;
  checkoutSessionId?: string | null;
}

/** The order row an event's step writes, once; the activity reads the customer's email from the body. */
export interface SaveOrderInput extends BodyStep {
  order: SavedOrder & { customerEmail: BodyField | null };
}

/** An order as a workflow sees it: the row without the customer's email, which stays out of Temporal. */
export type SavedOrder = Omit<Order, 'customerEmail'>;

export interface ChargeInput {
  source: string;
  eventId: string;
  /** The event ID: the same on every attempt, reset and re-run, never a run ID. */
  idempotencyKey: string;
  orderId: string;
  amount: number;
  currency: string;
  customer: string;
  paymentMethod: string;
}

export interface Charge {
  paymentIntentId: string;
  status: string;
}

export interface MarkFulfilledInput {
  source: string;
  eventId: string;
  idempotencyKey: string;
  paymentIntentId: string;
  orderId: string;
}
