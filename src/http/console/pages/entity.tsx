import type { ConsoleSession } from '../../../db/console-sessions';
import { ENTITY_OPERATOR_ACTIONS } from '../../../operator/entity-actions';
import type { EntityView } from '../../../temporal/entities';
import { CsrfField, entityPath, eventPath, Layout, Notice } from './layout';

/** The waiting events linked by name; a coalescing key's burst can hold thousands. */
const WAITING_SHOWN = 50;

/**
 * One key of a keyed flow (docs/entities.md): the last event applied and its version, the event
 * running, those waiting their turn, and the failed event it is parked on, each linked to its page.
 */
export function EntityPage({ session, view, notice }: { session: ConsoleSession; view: EntityView; notice?: { kind: 'done' | 'error'; text: string } }) {
  const link = (eventId: string, workflowId = eventId) => <a href={eventPath(workflowId)}>{eventId}</a>;
  return (
    <Layout title={`Key ${view.key}`} session={session}>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      <dl className="facts">
        <dt>Flow · source</dt>
        <dd>
          {view.flow} · {view.source} ({view.order}
          {view.coalesce && `: a burst gathers until ${view.coalesce.quiet / 1000} s quiet, at most ${view.coalesce.ceiling / 1000} s`})
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
            ? !view.stored && 'none'
            : view.pending.slice(0, WAITING_SHOWN).map((request, index) => (
                <span key={request.eventId}>
                  {index > 0 && ', '}
                  {link(request.eventId, request.workflowId)}
                </span>
              ))}
          {view.pending.length > WAITING_SHOWN && ` and ${view.pending.length - WAITING_SHOWN} more`}
          {view.stored && `${view.pending.length > 0 ? `, and ${view.stored.count} more` : view.stored.count} kept in the database until their turns come near`}
        </dd>
        {view.parked && (
          <>
            <dt>Parked on</dt>
            <dd className="parked">
              {link(view.parked.eventId, view.parked.workflowId)}: {view.parked.failure}. Its next events wait until an admin retries or skips it.
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
      {view.parked && view.open && session.role === 'admin' && (
        <form method="post" className="entity-action">
          <CsrfField session={session} />
          <label>
            Reason (kept in the entity's history and the audit trail) <input name="reason" required />
          </label>
          <div className="buttons">
            {ENTITY_OPERATOR_ACTIONS.map((action) => (
              <button key={action.name} type="submit" className={action.danger ? 'danger' : undefined} formAction={`${entityPath(view)}/${action.name}`}>
                {action.button(view.parked!.eventId)}
              </button>
            ))}
          </div>
        </form>
      )}
    </Layout>
  );
}
