import { ApplicationFailure } from '@temporalio/activity';
import { describeText, FailureType, type Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { callOnce } from '../src/db/ledger';
import type { EmailSender } from '../src/email/sender';
import { PermanentEmailError } from '../src/core/errors';
import { fieldText, readEventBody, readsBody, renderText } from './event-body';
import { count } from './metrics';

export function createEmailActivities({ db, email }: { db: Database; email: EmailSender }): Pick<Activities, 'sendEmail'> {
  return {
    /**
     * Sends once per event and step: the ledger first, then the provider's own idempotency key. The
     * address and text are completed from the event's body here, so they never enter Temporal.
     */
    sendEmail: (input) =>
      callOnce(db, { source: input.source, eventId: input.eventId, step: input.step, idempotencyKey: input.idempotencyKey }, async () => {
        const body = readsBody(input.to, input.subject, input.text) ? await readEventBody(db, input) : undefined;
        const to = typeof input.to === 'string' ? input.to : fieldText(body, input.to);
        if (to === '') throw ApplicationFailure.nonRetryable(`Event ${input.eventId} has no address at ${describeText(input.to)}.`, FailureType.EMAIL_REJECTED);
        try {
          const { id } = await email.send({
            to,
            subject: renderText(body, input.subject),
            text: renderText(body, input.text),
            idempotencyKey: input.idempotencyKey,
          });
          count('emails');
          return { externalId: id, result: { messageId: id } };
        } catch (error) {
          if (error instanceof PermanentEmailError) throw ApplicationFailure.nonRetryable(error.message, FailureType.EMAIL_REJECTED);
          throw error;
        }
      }),
  };
}
