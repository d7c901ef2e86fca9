import type { BulkConfirmation } from '../../../../contracts';
import type { BulkJobView } from '../../../temporal/bulk-jobs';
import type { EventSummary } from '../../../temporal/visibility';
import type { ConsoleSession } from '../../../db/console-sessions';
import type { FailureGroup } from '../../../db/event-list';
import { STUCK_AFTER_ATTEMPTS } from '../../../temporal/stuck-events';
import { BASE, CsrfField, eventPath, Layout, Notice, Status, Time } from './layout';

/** Failed and stuck events grouped by source × type × failure class (a stable fingerprint, never the failure's text). */
export function FailuresPage({ session, groups }: { session: ConsoleSession; groups: FailureGroup[] }) {
  return (
    <Layout title="Failure groups" session={session}>
      <p className="muted">
        Failed: the workflow ended. Stuck: it runs, and one of its activities has failed {STUCK_AFTER_ATTEMPTS} attempts or more in a row; Temporal keeps
        retrying it, and it goes on by itself once the cause is fixed.
      </p>
      {groups.length === 0 ? (
        <p className="muted">No failed or stuck event.</p>
      ) : (
        <table className="groups">
          <thead>
            <tr>
              <th>State</th>
              <th>Source</th>
              <th>Type</th>
              <th>Failure class</th>
              <th className="number">Events</th>
              <th>First seen</th>
              <th>Last seen</th>
              <th>Examples</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((group) => (
              <tr key={group.fingerprint}>
                <td>
                  <Status status={group.state} />
                </td>
                <td>{group.source}</td>
                <td>{group.type ?? '-'}</td>
                <td>
                  <a href={`${BASE}/failures/${group.fingerprint}`}>{group.errorClass}</a>
                </td>
                <td className="number">{group.count}</td>
                <td>
                  <Time at={group.firstSeen} />
                </td>
                <td>
                  <Time at={group.lastSeen} />
                </td>
                <td className="small">
                  {group.examples.map((id) => (
                    <a key={id} href={eventPath(id)}>
                      {id}{' '}
                    </a>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}

/** One group, and its bulk retry: a dry run first (count and examples), then a confirmation that starts the job. */
export function FailureGroupPage({
  session,
  group,
  dryRun,
}: {
  session: ConsoleSession;
  group: FailureGroup;
  dryRun?: { count: number; examples: EventSummary[]; reason: string; confirm: BulkConfirmation };
}) {
  return (
    <Layout title={`Failure group ${group.fingerprint}`} session={session}>
      <dl className="facts">
        <dt>Source · type</dt>
        <dd>
          {group.source} · {group.type ?? '-'}
        </dd>
        <dt>Failure class</dt>
        <dd>{group.errorClass}</dd>
        <dt>Events</dt>
        <dd>
          <a href={`${BASE}/events?${new URLSearchParams({ group: group.fingerprint })}`}>
            {group.count} {group.state}
          </a>
          , first <Time at={group.firstSeen} />, last <Time at={group.lastSeen} />
        </dd>
        {group.state === 'failed' && (
          <>
            <dt>From the CLI</dt>
            <dd>
              <code>durable-webhooks events retry --group {group.fingerprint} --dry-run</code>
            </dd>
          </>
        )}
      </dl>
      {group.state === 'stuck' && (
        <p className="confirm-what">
          These events are running: Temporal retries their failing activity with backoff, and each goes on by itself once the cause is fixed. To stop them
          instead: <code>durable-webhooks events cancel --group {group.fingerprint} --dry-run</code>.
        </p>
      )}
      {session.role === 'admin' &&
        group.state === 'failed' &&
        (!dryRun ? (
          <form method="post" action={`${BASE}/failures/${group.fingerprint}/retry`}>
            <CsrfField session={session} />
            <input type="hidden" name="dryRun" value="true" />
            <button type="submit">Retry this group: dry run…</button>
          </form>
        ) : (
          <section className="dry-run">
            <h2>Dry run</h2>
            <p className="confirm-what">
              Would retry {dryRun.count} event(s): each failed one is reset to its last failure and runs on from there, keeping its ledger claim, so no step
              that finished (a charge, an email) runs again; a completed or running one is skipped.
            </p>
            <ul>
              {dryRun.examples.map((event) => (
                <li key={event.eventId}>
                  <a href={eventPath(event.eventId)}>{event.eventId}</a> {event.status}
                </li>
              ))}
            </ul>
            {dryRun.count > 0 && (
              <form method="post" action={`${BASE}/failures/${group.fingerprint}/retry`}>
                <CsrfField session={session} />
                <input type="hidden" name="yes" value="true" />
                {/* What is confirmed: the job acts on at most these, received until then. */}
                <input type="hidden" name="count" value={String(dryRun.confirm.count)} />
                <input type="hidden" name="until" value={dryRun.confirm.until} />
                <label>
                  Reason <input name="reason" required />
                </label>
                <button type="submit" className="danger">
                  Yes, retry {dryRun.count} event(s)
                </button>
              </form>
            )}
          </section>
        ))}
    </Layout>
  );
}

/** A bulk job's progress; the page reloads itself (console.js) while the job runs. */
export function JobPage({ session, job }: { session: ConsoleSession; job: BulkJobView }) {
  const skipped = Object.entries(job.skipped);
  const running = job.status === 'running';
  return (
    <Layout title={`Job ${job.jobId}`} session={session}>
      <div data-refresh={running ? '2' : undefined} />
      {!running && (
        <Notice
          kind={job.failed > 0 ? 'error' : 'done'}
        >{`The job ${job.state}: ${job.done} done, ${skipped.reduce((sum, [, count]) => sum + count, 0)} skipped, ${job.failed} failed of ${job.total}.`}</Notice>
      )}
      <progress max={Math.max(job.total, 1)} value={job.done + job.failed + skipped.reduce((sum, [, count]) => sum + count, 0)} />
      <dl className="facts">
        <dt>State</dt>
        <dd className="job-state">{job.state}</dd>
        <dt>Done</dt>
        <dd className="job-done">{job.done}</dd>
        <dt>Skipped</dt>
        <dd>{skipped.length === 0 ? 0 : skipped.map(([why, count]) => `${count} ${why}`).join(', ')}</dd>
        <dt>Failed</dt>
        <dd>{job.failed}</dd>
      </dl>
      {job.failures.length > 0 && (
        <ul>
          {job.failures.map((failure) => (
            <li key={failure.eventId}>
              <a href={eventPath(failure.eventId)}>{failure.eventId}</a>: {failure.error}
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}
