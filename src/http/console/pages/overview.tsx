import type { ConsoleSession } from '../../../db/console-sessions';
import type { FailureGroup } from '../../../db/event-list';
import type { Backlog } from '../../../db/inbox';
import { BASE, Layout, Status, Time } from './layout';

export interface OverviewData {
  backlog: Backlog;
  refusals: Array<{ source: string; reason: string; count: number }>;
  groups: FailureGroup[];
  unrouted: Array<{ source: string; type: string; count: number }>;
  /** The sources' own routes, each with the events its flow took over the last hour at that source. */
  routes: Array<SourceRoute & { took: number }>;
  /** Accepted deliveries by source and the secret that signed them, counted by this receiver since it started. */
  secretUse: SecretUse[];
}

/** One flow of one of a source's routes (WEBHOOKS_CONFIG), and its filter. */
export interface SourceRoute {
  source: string;
  pattern: string;
  flow: string;
  filter?: string;
}

/** One source's accepted deliveries by the secret that signed them: the current one, or a rotation's previous one. */
export interface SecretUse {
  source: string;
  current: number;
  previous: number;
}

/** The overview: events a minute by source (a chart), the inbox, refusals of the last hour, the largest failure groups. */
export function OverviewPage({ session, data }: { session: ConsoleSession; data: OverviewData }) {
  const { backlog } = data;
  return (
    <Layout title="Overview" session={session}>
      <section className="tiles">
        <Tile
          label="Inbox backlog"
          value={backlog.count}
          href={`${BASE}/events?status=waiting`}
          detail={backlog.oldestSeconds === null ? 'empty' : `oldest ${Math.round(backlog.oldestSeconds)} s`}
        />
        <Tile label="Held" value={backlog.held} href={`${BASE}/events?status=held`} />
        <Tile label="Dead-lettered" value={backlog.deadLettered} href={`${BASE}/events?status=dead-lettered`} />
        <Tile label="Refused (last hour)" value={data.refusals.reduce((sum, each) => sum + each.count, 0)} href={`${BASE}/refused`} />
        <Tile label="Failure groups" value={data.groups.length} href={`${BASE}/failures`} />
      </section>

      <section>
        <h2>Events a second by source, each minute's average (last hour)</h2>
        <div className="chart">
          <canvas
            id="received-chart"
            data-chart={`${BASE}/api/received.json`}
            aria-label="Events received a second by source, each minute's average"
            role="img"
          />
        </div>
      </section>

      <section className="columns">
        <div>
          <h2>Refusals by reason (last hour)</h2>
          {data.refusals.length === 0 ? (
            <p className="muted">No delivery was refused in the last hour.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Source</th>
                  <th>Reason</th>
                  <th className="number">Count</th>
                </tr>
              </thead>
              <tbody>
                {data.refusals.map((each) => (
                  <tr key={`${each.source}/${each.reason}`}>
                    <td>{each.source}</td>
                    <td>
                      <a href={`${BASE}/refused?${new URLSearchParams({ source: each.source, reason: each.reason })}`}>{each.reason}</a>
                    </td>
                    <td className="number">{each.count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
        <div>
          <h2>Largest failure groups</h2>
          {data.groups.length === 0 ? (
            <p className="muted">No failed or stuck event.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Source · type</th>
                  <th>Failure</th>
                  <th className="number">Events</th>
                  <th>Last seen</th>
                </tr>
              </thead>
              <tbody>
                {data.groups.map((group) => (
                  <tr key={group.fingerprint}>
                    <td>
                      <Status status={group.state} /> {group.source} · {group.type ?? '-'}
                    </td>
                    <td>
                      <a href={`${BASE}/failures/${group.fingerprint}`}>{group.errorClass}</a>
                    </td>
                    <td className="number">{group.count}</td>
                    <td>
                      <Time at={group.lastSeen} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </section>

      {data.secretUse.some((each) => each.previous > 0) && (
        <section>
          <h2>Signing secrets in use during a rotation (this receiver, since it started)</h2>
          <p className="muted">Deliveries still signed with a previous secret: remove it once its count stops growing.</p>
          <table>
            <thead>
              <tr>
                <th>Source</th>
                <th className="number">Current secret</th>
                <th className="number">Previous secret</th>
              </tr>
            </thead>
            <tbody>
              {data.secretUse
                .filter((each) => each.previous > 0)
                .map((each) => (
                  <tr key={each.source}>
                    <td>{each.source}</td>
                    <td className="number">{each.current}</td>
                    <td className="number">{each.previous}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </section>
      )}

      {data.routes.length > 0 && (
        <section>
          <h2>Routes</h2>
          <p className="muted">
            Each source's own routes (WEBHOOKS_CONFIG): a flow runs for an event of the type when its filter holds; the events each flow took at the source in
            the last hour, by any of its routes.
          </p>
          <table>
            <thead>
              <tr>
                <th>Source</th>
                <th>Type</th>
                <th>Flow</th>
                <th>Filter</th>
                <th className="number">Took (last hour)</th>
              </tr>
            </thead>
            <tbody>
              {data.routes.map((each) => (
                <tr key={`${each.source}/${each.pattern}/${each.flow}`}>
                  <td>{each.source}</td>
                  <td>{each.pattern}</td>
                  <td>{each.flow}</td>
                  <td>{each.filter === undefined ? <span className="muted">always</span> : <code>{each.filter}</code>}</td>
                  <td className="number">{each.flow === 'ignore' ? '' : each.took}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}

      {data.unrouted.length > 0 && (
        <section>
          <h2>Event types no route handles (last hour)</h2>
          <p className="muted">Recorded by the default flow; route them in WEBHOOKS_CONFIG, or `ignore` them.</p>
          <table>
            <thead>
              <tr>
                <th>Source</th>
                <th>Type</th>
                <th className="number">Events</th>
              </tr>
            </thead>
            <tbody>
              {data.unrouted.map((each) => (
                <tr key={`${each.source}/${each.type}`}>
                  <td>{each.source}</td>
                  <td>
                    <a href={`${BASE}/events?${new URLSearchParams({ source: each.source, type: each.type })}`}>{each.type}</a>
                  </td>
                  <td className="number">{each.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </Layout>
  );
}

function Tile({ label, value, href, detail }: { label: string; value: number; href: string; detail?: string }) {
  return (
    <a className="tile" href={href}>
      <span className="tile-value">{value}</span>
      <span className="tile-label">{label}</span>
      {detail && <span className="tile-detail">{detail}</span>}
    </a>
  );
}
