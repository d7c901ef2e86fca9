import type { ConsoleSession } from '../../db/console-sessions';
import { LISTED_STATUSES, type ListedEvent } from '../../db/event-list';
import { BASE, eventPath, Layout, Status, Time } from './layout';
import { clean } from './refused';

/** The list filter as the page's form and its links hold it: text, as typed. */
export interface EventsQuery {
  source?: string;
  type?: string;
  status?: string;
  tenant?: string;
  error?: string;
  group?: string;
  since?: string;
  until?: string;
  via?: string;
}

/**
 * Every stored event, newest first, filtered as the CLI's bulk actions are (`--source`, `--type`
 * with `prefix*`, `--status`, `--since 2h`, `--until`, `--via`), and by tenant and failure class.
 */
export function EventsPage({ session, sources, query, events, next, error }: { session: ConsoleSession; sources: readonly string[]; query: EventsQuery; events: ListedEvent[]; next: string | null; error?: string }) {
  return (
    <Layout title="Events" session={session}>
      <form method="get" action={`${BASE}/events`} className="filters">
        <label>
          Source
          <select name="source" defaultValue={query.source ?? ''}>
            <option value="">any</option>
            {sources.map((source) => (
              <option key={source} value={source}>
                {source}
              </option>
            ))}
          </select>
        </label>
        <label>
          Type <input name="type" defaultValue={query.type ?? ''} placeholder="checkout.*" />
        </label>
        <label>
          Status
          <select name="status" defaultValue={query.status ?? ''}>
            <option value="">any</option>
            {LISTED_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tenant <input name="tenant" defaultValue={query.tenant ?? ''} />
        </label>
        <label>
          Failure class <input name="error" defaultValue={query.error ?? ''} placeholder="chargeOrder › CardDeclined" />
        </label>
        <label>
          Since <input name="since" defaultValue={query.since ?? ''} placeholder="2h" />
        </label>
        <label>
          Until <input name="until" defaultValue={query.until ?? ''} placeholder="ISO time or 30m" />
        </label>
        <label>
          Via
          <select name="via" defaultValue={query.via ?? ''}>
            <option value="">any</option>
            <option value="delivery">delivery</option>
            <option value="backfill">backfill</option>
          </select>
        </label>
        {query.group && <input type="hidden" name="group" value={query.group} />}
        <button type="submit">Filter</button>
      </form>
      {error && (
        <p className="notice notice-error" role="alert">
          {error}
        </p>
      )}
      {events.length === 0 ? (
        <p className="muted">No event matches.</p>
      ) : (
        <table className="events">
          <thead>
            <tr>
              <th>Received</th>
              <th>Event ID</th>
              <th>Source</th>
              <th>Type</th>
              <th>Status</th>
              <th>Tenant</th>
              <th>Failure class</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={`${event.source}/${event.eventId}`}>
                <td>
                  <Time at={event.receivedAt} />
                </td>
                <td>
                  <a href={eventPath(event.workflowId)}>{event.eventId}</a>
                </td>
                <td>{event.source}</td>
                <td>{event.type ?? '-'}</td>
                <td>
                  <Status status={event.status} />
                </td>
                <td>{event.tenant ?? ''}</td>
                <td>{event.errorClass ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <p>
          <a rel="next" href={`${BASE}/events?${new URLSearchParams({ ...clean({ ...query }), after: next })}`}>
            Next page →
          </a>
        </p>
      )}
    </Layout>
  );
}
