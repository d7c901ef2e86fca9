import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { describeText, type Activities, type ChargeInput, type EmailInput } from '../contracts';
import { formatAmount } from './format';

/** How flows call activities: database steps, and calls to Stripe and the email API with their summaries. */

const remoteDb = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds' });
const localDb = proxyLocalActivities<Activities>({ startToCloseTimeout: '30 seconds' });

/** The patch that moved database steps to local activities; histories without its marker replay as before. */
const LOCAL_DB_STEPS = 'database-steps-as-local-activities';

/**
 * An activity call for database work (claim, order rows, settings, completion): quick, idempotent,
 * retried until it succeeds, so it runs as a local activity in the worker that runs the workflow, with no task queue
 * round trip and fewer history events. A workflow started before this change keeps scheduling them
 * as activities where its history says so (`patched`).
 */
export const dbActivity = new Proxy({} as Activities, {
  get:
    (_target, name: keyof Activities) =>
    (...args: [never]) =>
      (patched(LOCAL_DB_STEPS) ? localDb : remoteDb)[name](...args),
});

/**
 * A database step whose effect the workflow goes on from, as an activity: its completion is in the
 * history before the workflow acts on it. A local activity's is not: it is lost with a workflow task
 * the server refuses (a signal came in while the task completed the workflow), and the retried task
 * goes on from the state before the step, while the step's effect stays in the database.
 */
export const recordedDbActivity = remoteDb;

/**
 * A provider's events API listed for a reconciliation or a backfill: it can take a while, so it
 * heartbeats after every event (a worker that dies is noticed within 10 s) and a retry resumes after
 * the last event it settled.
 */
export const listingActivity = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '5 seconds', maximumAttempts: 5 },
});

/**
 * An operator's job over many events (a bulk action, a route replay), a batch per activity: each
 * heartbeats after every event, so a worker that dies is noticed within 10 s and the retry goes on
 * after the last event it settled.
 */
export const jobActivity = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * Calls to Stripe and the email API. Their idempotency keys live 24 hours, so retries stop well
 * inside that window; the ledger covers anything later.
 */
export const externalActivity = proxyActivities<Activities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '23 hours',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Sends an email, its activity summarised for the Web UI as `email <to>: <subject>`, body fields as `{/pointer}`. */
export function sendEmail(input: EmailInput) {
  return externalActivity.sendEmail.executeWithOptions({ summary: `email ${describeText(input.to)}: ${describeText(input.subject)}` }, [input]);
}

/** Charges the order through Stripe, its activity summarised as `charge 42.00 EUR to cus_…` (and `(attempt 2, pm_…)` on a retry). */
export function charge(input: ChargeInput) {
  const retry = input.attempt && input.attempt > 1 ? ` (attempt ${input.attempt}, ${input.paymentMethod})` : '';
  return externalActivity.chargeOrder.executeWithOptions({ summary: `charge ${formatAmount(input.amount, input.currency)} to ${input.customer}${retry}` }, [
    input,
  ]);
}
