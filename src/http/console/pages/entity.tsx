import type { ConsoleSession } from '../../../db/console-sessions';
import type { EntityView } from '../../../temporal/entities';
import { eventPath, Layout } from './layout';

/**
 * One key of a keyed flow (docs/entities.md): the last event applied and its version, the event
 * running, those waiting their turn, and the failed event it is parked on, each linked to its page.
 */
export function EntityPage({ session, view }: { session: ConsoleSession; view: EntityView }) {
  const link = (eventId: string, workflowId = eventId) => <a href={eventPath(workflowId)}>{eventId}</a>;
  return (
    <Layout title={`Key ${view.key}`} session={session}>
      <dl className="facts">
        <dt>Flow · source</dt>
        <dd>
          {view.flow} · {view.source} ({view.order})
        </dd>
        <dt>Last applied</dt>
        <dd>
          {view.last ? (
            <>
              {link(view.last.eventId)} (version {JSON.stringify(view.last.version)})
            </>
          ) : (
            'none'
          )}
        </dd>
        <dt>Running</dt>
        <dd>{view.running ? link(view.running.eventId, view.running.workflowId) : view.open ? 'nothing' : 'nothing: the key is at rest'}</dd>
        <dt>Waiting</dt>
        <dd className="waiting">
          {view.pending.length === 0
            ? 'none'
            : view.pending.map((request, index) => (
                <span key={request.eventId}>
                  {index > 0 && ', '}
                  {link(request.eventId, request.workflowId)}
                </span>
              ))}
        </dd>
        {view.parked && (
          <>
            <dt>Parked on</dt>
            <dd className="parked">
              {link(view.parked.eventId, view.parked.workflowId)}: {view.parked.failure}. Its next events wait until an admin runs{' '}
              <code>durable-webhooks entities retry</code> or <code>skip</code>.
            </dd>
          </>
        )}
        {view.applied !== null && (
          <>
            <dt>This run</dt>
            <dd>
              {view.applied} applied, {view.superseded} superseded
            </dd>
          </>
        )}
        <dt>Temporal</dt>
        <dd>
          <a href={view.uiUrl}>{view.workflowId}</a>
        </dd>
      </dl>
    </Layout>
  );
}
