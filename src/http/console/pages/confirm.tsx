import type { ConsoleSession } from '../../../db/console-sessions';
import { CsrfField, eventPath, Layout } from './layout';

/** An action's confirmation: what will happen, in words, and the form that does it. */
export function ConfirmPage({
  session,
  eventId,
  action,
  what,
  fields,
  needsReason,
}: {
  session: ConsoleSession;
  eventId: string;
  action: string;
  what: string;
  fields: Record<string, string>;
  needsReason: boolean;
}) {
  return (
    <Layout title={`Confirm: ${action} ${eventId}`} session={session}>
      <p className="confirm-what">{what}</p>
      <form method="post" action={`${eventPath(eventId)}/${action}`}>
        <CsrfField session={session} />
        {Object.entries(fields).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        {needsReason && (
          <label>
            Reason (kept in the history and the audit trail) <input name="reason" required />
          </label>
        )}
        <button type="submit" className="danger">
          Yes, {action}
        </button>{' '}
        <a href={eventPath(eventId)}>Cancel</a>
      </form>
    </Layout>
  );
}
