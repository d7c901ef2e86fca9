import { ActivityFailure, ApplicationFailure, condition, log, patched, setHandler } from '@temporalio/workflow';
import {
  approveSignal,
  DEFAULT_PAYMENT_RETRY_WINDOW_MS,
  defineFlow,
  FailureType,
  flowSignal,
  ledgerEventId,
  readOptionalStrings,
  readRetryPayment,
  rejectSignal,
  retryPaymentSignal,
  type Charge,
  type ChargeInput,
  type EventOutcome,
  type RetryPayment,
  type SaveOrderInput,
  type WebhookEvent,
} from '../contracts';
import { charge as chargeCard, dbActivity, sendEmail } from './activities';
import { fieldsOf, finish, handleEvent, idempotencyKey, stepOf } from './event-frame';
import { formatAmount, workflowTime } from './format';
import type { Progress } from './progress';

interface OrderCreated {
  orderId: string;
  amount: number;
  currency: string;
  customer: string;
  paymentMethod: string;
}

export const chargeOrderFlow = defineFlow({
  workflow: chargeOrder,
  description: 'Holds large orders for review, charges the card through Stripe and emails a receipt; a decline waits for retryPayment.',
  handles: { 'standard-webhooks': ['order.created'] },
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'Waits up to REVIEW_TIMEOUT for review, then up to PAYMENT_RETRY_WINDOW (7 days) for retryPayment; no build is kept running that long, so it moves to the current build, and each change to it is patched() and replayed against its recorded histories.',
  },
  fields: {
    copy: { orderId: '/data/orderId', amount: '/data/amount', currency: '/data/currency', customer: '/data/customer', paymentMethod: '/data/paymentMethod' },
    personal: { email: '/data/email' },
  },
  signals: [
    flowSignal(approveSignal, readOptionalStrings('approve', ['by']), { description: 'approves an order held for review' }),
    flowSignal(rejectSignal, readOptionalStrings('reject', ['by', 'reason']), { description: 'rejects an order held for review; it is cancelled' }),
    flowSignal(retryPaymentSignal, readRetryPayment, {
      onlyWhileAwaited: true,
      description: "charges a declined order again, with the customer's new payment method or its own",
    }),
  ],
  summary: ({ amount, currency }) => (typeof amount === 'number' && typeof currency === 'string' ? formatAmount(amount, currency) : undefined),
});

/** The customer's address: read from the stored body by the activities that use it, never in this workflow's history. */
const customerEmail = chargeOrderFlow.bodyField('email');

/** The patch that lets a declined order be charged again; a history without its marker ends at its first decline, as before. */
const PAYMENT_RETRIES = 'payment-retries';

/**
 * Standard Webhooks `order.created`: hold it for review at or above REVIEW_THRESHOLD, then charge
 * it off-session and email a receipt. A decline emails a "payment failed" notice and waits, up to
 * PAYMENT_RETRY_WINDOW from the first decline, for `retryPayment` (with the customer's new payment
 * method) to charge again, each attempt under its own Idempotency-Key; with none it ends `declined`.
 */
export async function chargeOrder(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    let decision: { approved: boolean; by?: string; reason?: string } | undefined;
    setHandler(approveSignal, (input) => void (decision ??= { approved: true, by: input?.by }));
    setHandler(rejectSignal, (input) => void (decision ??= { approved: false, by: input?.by, reason: input?.reason }));
    const retries = new RetryRequests();

    const data = readOrder(event);
    const order = (status: SaveOrderInput['order']['status'], paymentIntentId?: string): SaveOrderInput['order'] => ({
      id: data.orderId,
      status,
      customerEmail,
      amount: data.amount,
      currency: data.currency,
      paymentIntentId,
    });
    const email = (step: string, subject: string, text: string) =>
      // This flow can send more than one email over its life (a decline, then a receipt after a fix), so each has its own key.
      sendEmail({ ...stepOf(event, step), idempotencyKey: idempotencyKey(step), to: customerEmail, subject, text });
    const settings = await dbActivity.flowSettings();

    if (settings.reviewThreshold !== null && data.amount >= settings.reviewThreshold) {
      await dbActivity.saveOrder({ ...stepOf(event, 'order:awaiting-review'), order: order('awaiting_review') });
      progress.waitFor(`approve or reject signal (up to ${settings.reviewTimeout})`, { signals: [approveSignal.name, rejectSignal.name], until: null });
      await condition(() => decision !== undefined, settings.reviewTimeout);
      progress.waitFor(null);
      if (!decision?.approved) {
        const reason = decision ? `rejected${decision.reason ? `: ${decision.reason}` : ''}` : `not reviewed within ${settings.reviewTimeout}`;
        await dbActivity.saveOrder({ ...stepOf(event, 'order:cancelled'), order: order('cancelled') });
        await email('email:cancelled', `Order ${data.orderId} cancelled`, `Your order ${data.orderId} was cancelled (${reason}). You have not been charged.`);
        return finish(event, progress, 'cancelled', { status: 'completed', detail: { orderId: data.orderId, cancelled: reason } });
      }
      progress.done('approved');
    }

    const { orderId, amount, currency, customer, paymentMethod } = data;
    const payment: Omit<ChargeInput, 'idempotencyKey'> = {
      source: event.source,
      eventId: ledgerEventId(event),
      orderId,
      amount,
      currency,
      customer,
      paymentMethod,
    };
    let charge: Charge;
    if (patched(PAYMENT_RETRIES)) {
      const windowMs = settings.paymentRetryWindowMs ?? DEFAULT_PAYMENT_RETRY_WINDOW_MS;
      const result = await chargeUntilPaid(payment, windowMs, progress, retries, async (attempt, declined, deadline) => {
        await dbActivity.saveOrder({ ...stepOf(event, 'order:payment-failed'), order: order('payment_failed') });
        await email(
          `email:payment-failed:${attempt}`,
          `Payment for order ${data.orderId} failed`,
          `We could not charge your card for order ${data.orderId}: ${declined}\n\nPlease update your payment method by ${deadline.toISOString().slice(0, 10)}, and we will charge it then.`,
        );
      });
      if ('declined' in result) return finish(event, progress, 'declined', { status: 'completed', detail: { orderId: data.orderId, ...result } });
      charge = result;
    } else {
      charge = await chargeOnce(payment, progress, async (declined) => {
        await dbActivity.saveOrder({ ...stepOf(event, 'order:payment-failed'), order: order('payment_failed') });
        await email('email:payment-failed', `Payment for order ${data.orderId} failed`, `We could not charge your card for order ${data.orderId}: ${declined}`);
      });
    }
    progress.done('charge');

    await dbActivity.saveOrder({ ...stepOf(event, 'order:paid'), order: order('paid', charge.paymentIntentId) });
    await email(
      'email:receipt',
      `Receipt for order ${data.orderId}`,
      `We charged ${formatAmount(data.amount, data.currency)} for order ${data.orderId}. Thank you!`,
    );
    progress.done('email:receipt');
    return finish(event, progress, 'charged', { status: 'completed', detail: { orderId: data.orderId, paymentIntentId: charge.paymentIntentId } });
  });
}

/**
 * Charges until a charge succeeds, or no `retryPayment` comes within the window after the first
 * decline. Attempt N has the key `<event ID>:charge:N`; a retry confirms the declined PaymentIntent
 * again, with the request's payment method or the last one. A retry Stripe refuses as a request (an
 * unknown payment method, say) tells the customer nothing and waits for another.
 */
async function chargeUntilPaid(
  payment: Omit<ChargeInput, 'idempotencyKey'>,
  windowMs: number,
  progress: Progress,
  retries: RetryRequests,
  tellCustomer: (attempt: number, declined: string, deadline: Date) => Promise<void>,
): Promise<Charge | { declined: string; attempts: number }> {
  let { paymentMethod } = payment;
  let paymentIntentId: string | undefined;
  let deadline: Date | undefined;
  let declined = '';
  for (let attempt = 1; ; attempt++) {
    let why: string;
    try {
      return await chargeCard({ ...payment, attempt, idempotencyKey: idempotencyKey(`charge:${attempt}`), paymentMethod, paymentIntentId });
    } catch (error) {
      const failure = stripeFailure(error);
      const refusedRetry = attempt > 1 && failure?.type === FailureType.STRIPE_INVALID_REQUEST;
      if (failure?.type !== FailureType.CARD_DECLINED && !refusedRetry) throw error;
      paymentIntentId = ((failure!.details?.[0] ?? {}) as { paymentIntentId?: string }).paymentIntentId ?? paymentIntentId;
      deadline ??= new Date(workflowTime().getTime() + windowMs);
      if (refusedRetry) {
        progress.done(`charge refused (attempt ${attempt})`);
        why = `, since Stripe refused attempt ${attempt}: ${failure!.message}`;
      } else {
        declined = failure!.message;
        progress.done(`charge declined (attempt ${attempt})`);
        await tellCustomer(attempt, declined, deadline);
        why = '';
      }
    }
    const next = attempt + 1;
    progress.waitFor(`retryPayment signal with the customer's new payment method, for charge attempt ${next}${why}`, {
      signals: [retryPaymentSignal.name],
      until: deadline.toISOString(),
      signalFields: { attempt: next },
    });
    const request = await retries.waitFor(next, deadline);
    progress.waitFor(null);
    if (!request) return { declined, attempts: attempt };
    progress.done(`retryPayment (attempt ${next}${request.by ? `, by ${request.by}` : ''})`);
    paymentMethod = request.paymentMethod ?? paymentMethod;
  }
}

/**
 * The one charge of an order whose workflow started before payment retries (its history has no
 * `payment-retries` marker): keyed by the event, and a decline fails the workflow after the
 * customer is told.
 */
async function chargeOnce(
  payment: Omit<ChargeInput, 'idempotencyKey'>,
  progress: Progress,
  tellCustomer: (declined: string) => Promise<void>,
): Promise<Charge> {
  try {
    return await chargeCard({ ...payment, idempotencyKey: idempotencyKey() });
  } catch (error) {
    const failure = stripeFailure(error);
    if (failure?.type !== FailureType.CARD_DECLINED) throw error;
    await tellCustomer(failure.message);
    progress.end('payment_failed');
    // handleEvent records the failure, with these details, in the ledger.
    throw ApplicationFailure.nonRetryable(`Payment for order ${payment.orderId} was declined: ${failure.message}`, FailureType.PAYMENT_DECLINED, {
      orderId: payment.orderId,
      declined: failure.message,
      ...(failure.details?.[0] as object | undefined),
    });
  }
}

/** The failure the charge activity threw on purpose (a decline, a refused request), if that is what this is. */
function stripeFailure(error: unknown): ApplicationFailure | undefined {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause : undefined;
}

/**
 * `retryPayment` requests, by the charge attempt each asks for; the first for an attempt wins, so
 * two requests for one decline make one charge. A request that names no attempt counts for the one
 * awaited when it comes, and is dropped when none is. The handler is set from the start, so the
 * copies a reset re-applies (delivered before the new run is back at its wait) answer the same
 * declines as before, making the same attempts with the same keys.
 */
class RetryRequests {
  private readonly requests = new Map<number, RetryPayment>();
  private awaited: number | undefined;

  constructor() {
    setHandler(retryPaymentSignal, (input) => {
      const checked = readRetryPayment(input);
      if (!checked.ok) return log.warn(`retryPayment ignored: ${checked.error}`);
      const request = checked.value;
      const attempt = request.attempt ?? this.awaited;
      if (attempt !== undefined && !this.requests.has(attempt)) this.requests.set(attempt, request);
    });
  }

  /** The request for `attempt`, waited for until `deadline`; undefined when none came. */
  async waitFor(attempt: number, deadline: Date): Promise<RetryPayment | undefined> {
    this.awaited = attempt;
    const remaining = deadline.getTime() - workflowTime().getTime();
    if (remaining > 0) await condition(() => this.requests.has(attempt), remaining);
    this.awaited = undefined;
    return this.requests.get(attempt);
  }
}

function readOrder(event: WebhookEvent): OrderCreated {
  const data = fieldsOf(event, chargeOrderFlow);
  const missing: string[] = (['orderId', 'currency', 'customer', 'paymentMethod'] as const).filter(
    (field) => typeof data[field] !== 'string' || data[field] === '',
  );
  if (!Number.isSafeInteger(data.amount) || (data.amount as number) <= 0) missing.push('amount');
  if (data.email !== true) missing.push('email');
  if (missing.length > 0) throw ApplicationFailure.nonRetryable(`order.created is missing or has invalid: ${missing.join(', ')}`, FailureType.INVALID_ORDER);
  return data as unknown as OrderCreated;
}
