import { SUBSCRIBER_SEPARATOR, type RoutedFlows } from '../../../../contracts';
import { ROUTE_FLOW } from '../../../flows';
import type { EventView } from '../../../temporal/event-view';
import { eventPath } from './layout';

/**
 * Where a route with subscribers sent the event (its `routeEvent` workflow's ledger record): a link
 * to each flow's own run, the flows its filters did not take, and the filters that could not
 * decide; on a subscriber's page, the event it runs for.
 */
export function Routed({ view }: { view: EventView }) {
  const separator = view.eventId.lastIndexOf(SUBSCRIBER_SEPARATOR);
  const outcome = view.ledger?.outcome as Partial<{
    routed: Array<{ flow: string; workflowId: string }>;
    filtered: string[];
    failures: RoutedFlows['failures'];
  }> | null;
  if (view.workflowType !== ROUTE_FLOW.name && separator > 0)
    return (
      <>
        <dt>Subscriber of</dt>
        <dd>
          <a href={eventPath(view.eventId.slice(0, separator))}>{view.eventId.slice(0, separator)}</a> (its route runs each of its flows on its own)
        </dd>
      </>
    );
  if (view.workflowType !== ROUTE_FLOW.name || !outcome?.routed) return null;
  return (
    <>
      <dt>Flows</dt>
      <dd className="flows">
        {outcome.routed.length === 0
          ? 'none started'
          : outcome.routed.map((each, index) => (
              <span key={each.flow}>
                {index > 0 && ', '}
                <a href={eventPath(each.workflowId)}>{each.flow}</a>
              </span>
            ))}
        {outcome.filtered && outcome.filtered.length > 0 && <span className="muted"> · filtered out: {outcome.filtered.join(', ')}</span>}
      </dd>
      {outcome.failures && outcome.failures.length > 0 && (
        <>
          <dt>Filters that failed</dt>
          <dd>
            {outcome.failures.map((failure) => (
              <div key={failure.flow}>
                {failure.flow}: {failure.error}
              </div>
            ))}
          </dd>
        </>
      )}
    </>
  );
}
