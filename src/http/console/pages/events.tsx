import type { ConsoleSession } from '../../../db/console-sessions';
import { LISTED_STATUSES, type ListedEvent } from '../../../db/event-list';
import { BASE, eventPath, Layout, Status, Time } from './layout';
import { clean } from './refused';
import { FILTER_FIELDS } from '../../../temporal/visibility';

/** The filter's fields the console's list takes: all but a raw visibility query and the flow (a subscriber's run has no row of its own there), since it lists from the body store. */
export const CONSOLE_FILTER_FIELDS = FILTER_FIELDS.filter((field) => field !== 'query' && field !== 'flow');

/** The list filter as the page's form and its links hold it: text, as typed. */
export type EventsQuery = Partial<Record<(typeof CONSOLE_FILTER_FIELDS)[number], string>>;

/**
 * Every stored event, newest first, filtered as the CLI's bulk actions are (`--source`, `--type`
 * with `prefix*`, `--status`, `--since 2h`, `--until`, `--via`), and by tenant and failure class.
 */
export function EventsPage({
  session,
  sources,
  query,
  events,
  next,
  error,
}: {
  session: ConsoleSession;
  sources: readonly string[];
  query: EventsQuery;
  events: ListedEvent[];
  next: string | null;
  error?: string;
}) {
  return (
    <Layout title="Events" session={session}>
      <form method="get" action={`${BASE}/events`} className="filters">
        <Choice label="Source" name="source" value={query.source} options={sources} />
        <Text label="Type" name="type" value={query.type} placeholder="checkout.*" />
        <Choice label="Status" name="status" value={query.status} options={LISTED_STATUSES} />
        <Text label="Tenant" name="tenant" value={query.tenant} />
        <Text label="Failure class" name="errorClass" value={query.errorClass} placeholder="chargeOrder › CardDeclined" />
        <Text label="Since" name="since" value={query.since} placeholder="2h" />
        <Text label="Until" name="until" value={query.until} placeholder="ISO time or 30m" />
        <Choice label="Via" name="via" value={query.via} options={['delivery', 'backfill']} />
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

/** A filter field of free text. */
function Text({ label, name, value, placeholder }: { label: string; name: string; value: string | undefined; placeholder?: string }) {
  return (
    <label>
      {label} <input name={name} defaultValue={value ?? ''} placeholder={placeholder} />
    </label>
  );
}

/** A filter field of one of `options`, or any. */
function Choice({ label, name, value, options }: { label: string; name: string; value: string | undefined; options: readonly string[] }) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value ?? ''}>
        <option value="">any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </label>
  );
}
