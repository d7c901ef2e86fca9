import type { ConsoleSession } from '../../../db/console-sessions';
import type { RefusalRow } from '../../../db/refusals';
import { MASK } from '../../../core/redact';
import { BASE, Layout, Time } from './layout';

/**
 * Deliveries refused before anything was recorded: when, from where, and why. Never a body, and of
 * the headers only their names: whoever sent it proved nothing. A viewer sees no client address.
 */
export function RefusedPage({
  session,
  refusals,
  filter,
  next,
  limits,
}: {
  session: ConsoleSession;
  refusals: RefusalRow[];
  filter: { source?: string; reason?: string };
  next: string | null;
  limits: { maxRows: number; retentionDays: number };
}) {
  return (
    <Layout title="Refused deliveries" session={session}>
      <p className="muted">
        The newest {limits.maxRows.toLocaleString('en')} refusals of the last {limits.retentionDays} days are kept, without their bodies.
      </p>
      <form method="get" action={`${BASE}/refused`} className="filters">
        <label>
          Source <input name="source" defaultValue={filter.source ?? ''} />
        </label>
        <label>
          Reason <input name="reason" defaultValue={filter.reason ?? ''} placeholder="bad-signature" />
        </label>
        <button type="submit">Filter</button>
      </form>
      {refusals.length === 0 ? (
        <p className="muted">No refused delivery{filter.source || filter.reason ? ' matches' : ''}.</p>
      ) : (
        <table className="refusals">
          <thead>
            <tr>
              <th>Time</th>
              <th>Source</th>
              <th>Route</th>
              <th>Status</th>
              <th>Reason</th>
              <th>Client</th>
              <th>Headers</th>
            </tr>
          </thead>
          <tbody>
            {refusals.map((refusal) => (
              <tr key={refusal.id}>
                <td>
                  <Time at={refusal.refusedAt} />
                </td>
                <td>{refusal.source}</td>
                <td>
                  <code>{refusal.path}</code>
                </td>
                <td>{refusal.status}</td>
                <td>
                  <strong className="reason">{refusal.reason}</strong>
                  <div className="muted small">{refusal.detail}</div>
                </td>
                <td>{refusal.client === null ? '-' : session.role === 'viewer' ? MASK : refusal.client}</td>
                <td className="small">{refusal.headerNames.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <p>
          <a href={`${BASE}/refused?${new URLSearchParams({ ...clean(filter), before: next })}`}>Older refusals →</a>
        </p>
      )}
    </Layout>
  );
}

/** The given values of a filter, for a link's query string. */
export function clean(filter: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(filter).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''));
}
