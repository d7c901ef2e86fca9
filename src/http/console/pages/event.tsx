import type { FlowSignal } from '../../../../contracts';
import type { AuditEntry, ConsoleSession } from '../../../db/console-sessions';
import type { ListedEvent } from '../../../db/event-list';
import { EVENT_ACTIONS } from '../../../operator/event-actions';
import type { Verification } from '../../../providers/verify-stored';
import type { EventView } from '../../../temporal/event-view';
import { DownstreamKeys } from './downstream-keys';
import { Routed } from './routed';
import { CsrfField, entityPath, eventPath, Layout, Notice, Status, Time } from './layout';

/** What the event page shows of the stored delivery: its headers, and its body decoded, masked unless revealed. */
export interface DeliveryView {
  contentType: string | null;
  headers: Record<string, string>;
  /** The body as text (JSON pretty-printed); null when erased or purged. */
  body: string | null;
  /** Personal values are masked in `body` unless an admin revealed them (audited). */
  revealed: boolean;
  truncated: boolean;
}

export interface EventPageData {
  eventId: string;
  listed: ListedEvent | undefined;
  view: EventView | undefined;
  /** Why Temporal could not be asked, when it could not. */
  viewError?: string;
  delivery: DeliveryView | undefined;
  verification: Verification | { error: string } | undefined;
  signals: ReadonlyArray<FlowSignal>;
  audit: AuditEntry[];
  notice?: { kind: 'done' | 'error'; text: string };
}

/**
 * One event: its delivery, whether it verifies now, its workflow, every key we sent downstream, and
 * the actions an admin may take (each asks for confirmation first). A viewer sees all but the actions.
 */
export function EventPage({ session, data }: { session: ConsoleSession; data: EventPageData }) {
  const { view, listed, delivery } = data;
  // Temporal says running; the body store knows when an activity keeps failing under it.
  const status = listed?.status === 'stuck' && view?.status === 'running' ? 'stuck' : (view?.status ?? listed?.status ?? 'unknown');
  return (
    <Layout title={`Event ${data.eventId}`} session={session}>
      {data.notice && <Notice kind={data.notice.kind}>{data.notice.text}</Notice>}
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <Status status={status} />
        </dd>
        <dt>Source · type</dt>
        <dd>
          {listed?.source ?? view?.source ?? '-'} · {listed?.type ?? view?.eventType ?? '-'}
        </dd>
        {listed?.tenant && (
          <>
            <dt>Tenant</dt>
            <dd>{listed.tenant}</dd>
          </>
        )}
        {listed?.errorClass && (
          <>
            <dt>Failure class</dt>
            <dd>{listed.errorClass}</dd>
          </>
        )}
        {view && (
          <>
            <dt>Temporal</dt>
            <dd>
              <a href={view.uiUrl} rel="noreferrer" target="_blank">
                Open in the Temporal UI
              </a>
            </dd>
          </>
        )}
      </dl>

      <section>
        <h2>Delivery</h2>
        {!delivery ? (
          <p className="muted">No body is stored for this event.</p>
        ) : (
          <>
            <dl className="facts">
              <dt>Received</dt>
              <dd>
                <Time at={listed?.receivedAt ?? null} /> via {listed?.via ?? '-'}
              </dd>
              <dt>Content type</dt>
              <dd>{delivery.contentType ?? '-'}</dd>
              <dt>Verifies now</dt>
              <dd className="verification">
                {!data.verification
                  ? '-'
                  : 'error' in data.verification
                    ? data.verification.error
                    : `${data.verification.verified ? 'yes' : 'no'}: ${data.verification.detail}`}
              </dd>
            </dl>
            <h3>Signature headers</h3>
            {Object.keys(delivery.headers).length === 0 ? (
              <p className="muted">None (listed from the provider's API).</p>
            ) : (
              <table>
                <tbody>
                  {Object.entries(delivery.headers).map(([name, value]) => (
                    <tr key={name}>
                      <th>{name}</th>
                      <td>
                        <code>{value}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <h3>Body {delivery.body !== null && (delivery.revealed ? '(revealed)' : '(personal values masked)')}</h3>
            {delivery.body === null ? (
              <p className="muted">{view?.body?.state === 'purged' ? 'Purged after BODY_RETENTION.' : 'Erased.'}</p>
            ) : (
              <>
                <pre className="body">{delivery.body}</pre>
                {delivery.truncated && <p className="muted">Shown up to 64 KiB.</p>}
                {!delivery.revealed && session.role === 'admin' && (
                  <form method="post" action={`${eventPath(data.eventId)}/reveal`}>
                    <CsrfField session={session} />
                    <button type="submit">Reveal personal values (audited)</button>
                  </form>
                )}
              </>
            )}
          </>
        )}
      </section>

      <section>
        <h2>Workflow</h2>
        {!view ? <p className="muted">{data.viewError ?? 'Temporal has no workflow for this event.'}</p> : <WorkflowSection view={view} />}
      </section>

      <section>
        <h2>Keys sent downstream</h2>
        <DownstreamKeys view={view} />
      </section>

      {session.role === 'admin' && <Actions eventId={data.eventId} status={status} signals={data.signals} />}

      <section>
        <h2>Audit trail</h2>
        {data.audit.length === 0 ? (
          <p className="muted">No console action on this event.</p>
        ) : (
          <ul>
            {data.audit.map((entry, index) => (
              <li key={index}>
                <Time at={entry.at} /> {entry.actor}: {entry.action}
              </li>
            ))}
          </ul>
        )}
      </section>
    </Layout>
  );
}

function WorkflowSection({ view }: { view: EventView }) {
  return (
    <>
      <dl className="facts">
        <dt>Workflow</dt>
        <dd>
          {view.workflowType} <Status status={view.status} />
        </dd>
        <dt>Started · closed</dt>
        <dd>
          <Time at={view.startTime} /> · <Time at={view.closeTime} />
        </dd>
        {view.summary && (
          <>
            <dt>Summary</dt>
            <dd>{view.summary}</dd>
          </>
        )}
        <Routed view={view} />
        {view.progress?.entity && (
          <>
            <dt>Key</dt>
            <dd>
              <a className="entity" href={entityPath(view.progress.entity)}>
                {view.progress.entity.key}
              </a>{' '}
              ({view.progress.entity.flow}: one event of the key at a time)
            </dd>
          </>
        )}
        {view.progress && (
          <>
            <dt>Steps done</dt>
            <dd className="steps">{view.progress.stepsDone.join(' → ') || '-'}</dd>
            {view.progress.waitingFor && (
              <>
                <dt>Waiting for</dt>
                <dd>
                  {view.progress.waitingFor}
                  {view.progress.awaiting?.until && `, until ${view.progress.awaiting.until}`}
                </dd>
              </>
            )}
            {view.progress.outcome && (
              <>
                <dt>Outcome</dt>
                <dd>{view.progress.outcome}</dd>
              </>
            )}
          </>
        )}
      </dl>
      {view.pendingActivities.length > 0 && (
        <>
          <h3>Pending activities</h3>
          <table>
            <thead>
              <tr>
                <th>Activity</th>
                <th className="number">Attempt</th>
                <th>Last failure</th>
              </tr>
            </thead>
            <tbody>
              {view.pendingActivities.map((activity, index) => (
                <tr key={index}>
                  <td>{activity.activityType}</td>
                  <td className="number">{activity.attempt}</td>
                  <td>{activity.lastFailure ?? '-'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {view.failure && (
        <>
          <h3>Failure</h3>
          <ol className="failure">
            {view.failure.map((line, index) => (
              <li key={index}>{line}</li>
            ))}
          </ol>
        </>
      )}
    </>
  );
}

/** The actions that apply to the event now, as each declares (retry and reset a failed one, cancel or terminate a running one, erase any): each opens a confirmation that says what will happen, which then POSTs. */
function Actions({ eventId, status, signals }: { eventId: string; status: string; signals: ReadonlyArray<FlowSignal> }) {
  const confirm = (action: string) => `${eventPath(eventId)}/confirm/${action}`;
  return (
    <section className="actions">
      <h2>Actions</h2>
      {(status === 'running' || status === 'stuck') &&
        signals.map((signal) => (
          <form key={signal.name} method="get" action={confirm('signal')} className="signal">
            <input type="hidden" name="signal" value={signal.name} />
            <strong>{signal.name}</strong> <span className="muted">{signal.description}</span>
            {signal.fields ? (
              signal.fields.map((field) => (
                <label key={field}>
                  {field} <input name={`field.${field}`} />
                </label>
              ))
            ) : (
              <label>
                argument (JSON) <textarea name="json" rows={2} />
              </label>
            )}
            <button type="submit">Send {signal.name}…</button>
          </form>
        ))}
      <div className="buttons">
        {EVENT_ACTIONS.filter(({ offeredAt }) => offeredAt === 'always' || offeredAt.includes(status)).map(({ name: action }) => (
          <a key={action} className="button" href={confirm(action)}>
            {action[0]!.toUpperCase() + action.slice(1)}…
          </a>
        ))}
      </div>
    </section>
  );
}
