import { ApplicationFailure } from '@temporalio/activity';
import { FailureType, type Activities } from '../contracts';
import type { Database } from '../src/db/database';
import { callOnce } from '../src/db/ledger';
import { PermanentEmailError, type EmailSender } from '../src/email/sender';

export function createEmailActivities({ db, email }: { db: Database; email: EmailSender }): Pick<Activities, 'sendEmail'> {
  return {
    /** Sends once per event and step: the ledger first, then the provider's own idempotency key. */
    sendEmail: ({ source, eventId, step, idempotencyKey, to, subject, text }) =>
      callOnce(db, { source, eventId, step }, async () => {
        try {
          const { id } = await email.send({ to, subject, text, idempotencyKey });
          return { externalId: id, result: { messageId: id } };
        } catch (error) {
          if (error instanceof PermanentEmailError) throw ApplicationFailure.nonRetryable(error.message, FailureType.EMAIL_REJECTED);
          throw error;
        }
      }),
  };
}
