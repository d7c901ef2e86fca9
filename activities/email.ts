import { ApplicationFailure } from '@temporalio/activity';
import type { Database } from '../src/db/database';
import { findStep, recordStep } from '../src/db/ledger';
import { PermanentEmailError, type EmailSender } from '../src/email/sender';

export interface EmailInput {
  source: string;
  eventId: string;
  /** The ledger step, one per email an event sends. */
  step: string;
  idempotencyKey: string;
  to: string;
  subject: string;
  text: string;
}

export function createEmailActivities({ db, email }: { db: Database; email: EmailSender }) {
  return {
    /** Sends once per event and step: the ledger first, then the provider's own idempotency key. */
    async sendEmail(input: EmailInput): Promise<{ messageId: string }> {
      const done = await findStep<{ messageId: string }>(db, input.source, input.eventId, input.step);
      if (done) return done.result;
      try {
        const { id } = await email.send({ to: input.to, subject: input.subject, text: input.text, idempotencyKey: input.idempotencyKey });
        await recordStep(db, input.source, input.eventId, input.step, { externalId: id, result: { messageId: id } });
        return { messageId: id };
      } catch (error) {
        if (error instanceof PermanentEmailError) throw ApplicationFailure.nonRetryable(error.message, 'EmailRejected');
        throw error;
      }
    },
  };
}
