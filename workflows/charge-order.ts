import { ActivityFailure, ApplicationFailure, condition, setHandler } from '@temporalio/workflow';
import { approveSignal, bodyField, FailureType, rejectSignal, WorkflowType, type EventOutcome, type SaveOrderInput, type WebhookEvent } from '../contracts';
import { charge as chargeCard, db, fieldsOf, finish, formatAmount, handleEvent, idempotencyKey, sendEmail, stepOf } from './steps';

interface OrderCreated {
  orderId: string;
  amount: number;
  currency: string;
  customer: string;
  paymentMethod: string;
}

/** The customer's address: read from the stored body by the activities that use it, never in this workflow's history. */
const customerEmail = bodyField(WorkflowType.chargeOrder, 'email');

/**
 * Standard Webhooks `order.created`: hold it for review at or above REVIEW_THRESHOLD, then charge
 * it off-session with the event's workflow ID as Stripe's idempotency key, and email a receipt, or a
 * "payment failed" notice on a decline (after which the workflow fails, for operators to see).
 */
export async function chargeOrder(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    let decision: { approved: boolean; by?: string; reason?: string } | undefined;
    setHandler(approveSignal, (input) => void (decision ??= { approved: true, by: input?.by }));
    setHandler(rejectSignal, (input) => void (decision ??= { approved: false, by: input?.by, reason: input?.reason }));

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
    const settings = await db.flowSettings();

    if (settings.reviewThreshold !== null && data.amount >= settings.reviewThreshold) {
      await db.saveOrder({ ...stepOf(event, 'order:awaiting-review'), order: order('awaiting_review') });
      progress.waitFor(`approve or reject signal (up to ${settings.reviewTimeout})`);
      await condition(() => decision !== undefined, settings.reviewTimeout);
      progress.waitFor(null);
      if (!decision?.approved) {
        const reason = decision ? `rejected${decision.reason ? `: ${decision.reason}` : ''}` : `not reviewed within ${settings.reviewTimeout}`;
        await db.saveOrder({ ...stepOf(event, 'order:cancelled'), order: order('cancelled') });
        await email('email:cancelled', `Order ${data.orderId} cancelled`, `Your order ${data.orderId} was cancelled (${reason}). You have not been charged.`);
        return finish(event, progress, 'cancelled', { status: 'completed', detail: { orderId: data.orderId, cancelled: reason } });
      }
      progress.done('approved');
    }

    let charge;
    try {
      charge = await chargeCard({ source: event.source, eventId: event.id, idempotencyKey: idempotencyKey(), orderId: data.orderId, amount: data.amount, currency: data.currency, customer: data.customer, paymentMethod: data.paymentMethod });
    } catch (error) {
      if (!(error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === FailureType.CARD_DECLINED)) throw error;
      await db.saveOrder({ ...stepOf(event, 'order:payment-failed'), order: order('payment_failed') });
      await email('email:payment-failed', `Payment for order ${data.orderId} failed`, `We could not charge your card for order ${data.orderId}: ${error.cause.message}`);
      progress.end('payment_failed');
      // handleEvent records the failure, with these details, in the ledger.
      throw ApplicationFailure.nonRetryable(`Payment for order ${data.orderId} was declined: ${error.cause.message}`, FailureType.PAYMENT_DECLINED, {
        orderId: data.orderId,
        declined: error.cause.message,
        ...(error.cause.details?.[0] as object | undefined),
      });
    }
    progress.done('charge');

    await db.saveOrder({ ...stepOf(event, 'order:paid'), order: order('paid', charge.paymentIntentId) });
    await email('email:receipt', `Receipt for order ${data.orderId}`, `We charged ${formatAmount(data.amount, data.currency)} for order ${data.orderId}. Thank you!`);
    progress.done('email:receipt');
    return finish(event, progress, 'charged', { status: 'completed', detail: { orderId: data.orderId, paymentIntentId: charge.paymentIntentId } });
  });
}

function readOrder(event: WebhookEvent): OrderCreated {
  const data = fieldsOf(event);
  const missing: string[] = (['orderId', 'currency', 'customer', 'paymentMethod'] as const).filter((field) => typeof data[field] !== 'string' || data[field] === '');
  if (!Number.isSafeInteger(data.amount) || (data.amount as number) <= 0) missing.push('amount');
  if (data.email !== true) missing.push('email');
  if (missing.length > 0) throw ApplicationFailure.nonRetryable(`order.created is missing or has invalid: ${missing.join(', ')}`, FailureType.INVALID_ORDER);
  return data as unknown as OrderCreated;
}
