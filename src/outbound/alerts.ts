import { createHash } from 'node:crypto';
import type { AlertConfig } from '../config';
import type { Database } from '../db/database';
import { syncInternalEndpoint } from '../db/endpoints';
import { claimNewlyParked, unclaimParked } from '../db/entities';
import { failureGroups, type FailureGroup } from '../db/event-list';
import type { Logger } from '../core/logger';
import { errorLine, withoutInternalAddresses } from '../core/redact';
import type { MessageService } from './messages';

/** The internal scopes of the alert endpoints; no API token's scope has a colon. */
export const ALERT_SCOPES = { webhook: 'alerts:webhook', slack: 'alerts:slack' } as const;

/** Failure groups a pass looks at: the largest. */
const GROUPS_CHECKED = 500;

/** Dead-lettered events one alert names; it counts them all. */
const DEAD_LETTERS_NAMED = 5;

export interface Alert {
  type: 'failure_group.new' | 'failure_group.growing' | 'inbox.dead_lettered' | 'entity.parked';
  /** Unique per alert: the message's Idempotency-Key, so two receivers or a retry never send it twice. */
  key: string;
  text: string;
  data: Record<string, unknown>;
  /** Gives the claim back when the alert could not be sent, so the next pass sends it. */
  unclaim: (db: Database) => Promise<unknown>;
}

/**
 * Watches the failure groups, the inbox and the keyed flows' keys, and alerts: a new failure group,
 * a group that grows past the threshold, the rows dead-lettered since the last pass, in one alert,
 * and each key newly parked on a failed event. Text leaves the
 * cluster, so it names no internal host or port, and what a sender chose (IDs, types) is escaped for
 * Slack, where `<!channel>` would mention everyone. Every receiver may run it: what was alerted is claimed in
 * PostgreSQL first (one process wins each), and each alert is a message of our own outbound delivery
 * whose Idempotency-Key names it, so it is sent once, signed, retried and recorded like any message.
 */
export class AlertChecker {
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly messages: MessageService,
    private readonly config: AlertConfig,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await syncInternalEndpoint(this.db, ALERT_SCOPES.webhook, this.config.webhook && { ...this.config.webhook, bodyFormat: 'standard-webhooks' });
    await syncInternalEndpoint(
      this.db,
      ALERT_SCOPES.slack,
      this.config.slackUrl === undefined ? undefined : { url: this.config.slackUrl, bodyFormat: 'payload' },
    );
    const run = () => {
      this.pass = this.check().catch((error: unknown) =>
        this.logger.warn({ error: errorLine(error) }, 'alerts: the check failed; trying again at the next interval'),
      );
      void this.pass.then(() => {
        if (!this.stopped) this.timer = setTimeout(run, this.config.intervalMs).unref();
      });
    };
    run();
  }

  /** One pass: claims what is new, then sends an alert for each claim. */
  async check(): Promise<Alert[]> {
    const alerts = [
      ...(await this.groupAlerts(await failureGroups(this.db, { limit: GROUPS_CHECKED }))),
      ...(await this.deadLetterAlerts()),
      ...(await this.parkedAlerts()),
    ];
    for (const alert of alerts) {
      try {
        await this.send(alert);
      } catch (error) {
        await alert.unclaim(this.db);
        throw error;
      }
    }
    return alerts;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pass;
  }

  private async groupAlerts(groups: FailureGroup[]): Promise<Alert[]> {
    const alerts: Alert[] = [];
    for (const group of groups) {
      const { rows } = await this.db.query<{ inserted: boolean; alerted_at: Date }>(
        `INSERT INTO alerted_groups (fingerprint, alerted_count, seen_count) VALUES ($1, $2, $2)
         ON CONFLICT (fingerprint) DO UPDATE SET seen_count = EXCLUDED.seen_count
         RETURNING (xmax = 0) AS inserted, alerted_at`,
        [group.fingerprint, group.count],
      );
      if (rows[0]!.inserted) {
        alerts.push(this.groupAlert('failure_group.new', group, `${rows[0]!.alerted_at.getTime()}`));
        continue;
      }
      const grown = await this.db.query<{ alerted_at: Date }>(
        `UPDATE alerted_groups SET alerted_count = $2 WHERE fingerprint = $1 AND alerted_count < $3 AND $2 >= $3 RETURNING alerted_at`,
        [group.fingerprint, group.count, this.config.groupThreshold],
      );
      if (grown.rows[0]) alerts.push(this.groupAlert('failure_group.growing', group, `${grown.rows[0].alerted_at.getTime()}:${this.config.groupThreshold}`));
    }
    // A group that emptied (its events retried, or past retention) is new again when it comes back.
    await this.db.query('DELETE FROM alerted_groups WHERE NOT (fingerprint = ANY($1))', [groups.map((group) => group.fingerprint)]);
    return alerts;
  }

  private groupAlert(type: 'failure_group.new' | 'failure_group.growing', group: FailureGroup, generation: string): Alert {
    const what = `${group.count} ${group.source} · ${group.type ?? '-'} event(s) ${group.state === 'failed' ? 'failed' : 'stuck, an activity failing again and again,'} with ${group.errorClass}`;
    return {
      type,
      key: `${type}:${group.fingerprint}:${generation}`,
      text: `${type === 'failure_group.new' ? 'New failure group' : `Failure group past ${this.config.groupThreshold} events`}: ${what}.${this.link(`/failures/${group.fingerprint}`)}`,
      data: {
        fingerprint: group.fingerprint,
        state: group.state,
        source: group.source,
        type: group.type,
        errorClass: group.errorClass,
        count: group.count,
        examples: group.examples,
      },
      unclaim: (db) =>
        type === 'failure_group.new'
          ? db.query('DELETE FROM alerted_groups WHERE fingerprint = $1', [group.fingerprint])
          : db.query('UPDATE alerted_groups SET alerted_count = 0 WHERE fingerprint = $1', [group.fingerprint]),
    };
  }

  private async deadLetterAlerts(): Promise<Alert[]> {
    const { rows } = await this.db.query<{ source: string; event_id: string; workflow_id: string; start_error: string | null }>(
      `WITH claimed AS (
         INSERT INTO alerted_dead_letters (source, event_id)
         SELECT source, event_id FROM event_bodies WHERE dead_lettered_at IS NOT NULL AND started_at IS NULL
         ON CONFLICT DO NOTHING RETURNING source, event_id)
       SELECT c.source, c.event_id, b.workflow_id, b.start_error FROM claimed c JOIN event_bodies b USING (source, event_id) ORDER BY c.source, c.event_id`,
    );
    if (rows.length === 0) return [];
    const named = rows.slice(0, DEAD_LETTERS_NAMED);
    const [first] = rows;
    const events =
      named.map((row) => `${row.source} ${row.event_id}`).join(', ') + (rows.length > named.length ? ` and ${rows.length - named.length} more` : '');
    const cause = withoutInternalAddresses(first!.start_error ?? 'Temporal refused it');
    return [
      {
        type: 'inbox.dead_lettered' as const,
        // The claimed rows name the alert: another pass claims others, and names another.
        key: `inbox.dead_lettered:${createHash('sha256')
          .update(rows.map((row) => `${row.source}\n${row.event_id}`).join('\n'))
          .digest('hex')
          .slice(0, 32)}`,
        text: `Dead-lettered: ${rows.length} event(s) not started (${events}; the first because: ${cause}); \`durable-webhooks inbox retry\` starts them once the cause is fixed.${this.link(rows.length === 1 ? `/events/${encodeURIComponent(first!.workflow_id)}` : '/events?status=dead-lettered')}`,
        data: { count: rows.length, sources: [...new Set(rows.map((row) => row.source))], examples: named.map((row) => row.workflow_id), error: cause },
        unclaim: (db: Database) =>
          db.query('DELETE FROM alerted_dead_letters WHERE (source, event_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))', [
            rows.map((row) => row.source),
            rows.map((row) => row.event_id),
          ]),
      },
    ];
  }

  /** A keyed flow's key newly parked on a failed event (docs/entities.md): one alert per key and event. */
  private async parkedAlerts(): Promise<Alert[]> {
    return (await claimNewlyParked(this.db)).map(({ parked, ...ref }) => ({
      type: 'entity.parked' as const,
      key: `entity.parked:${createHash('sha256').update(`${ref.flow}\n${ref.source}\n${ref.key}\n${parked.eventId}`).digest('hex').slice(0, 32)}`,
      text: `Key parked: ${ref.flow} ${ref.source} ${ref.key} waits on ${parked.eventId}, which failed (${withoutInternalAddresses(parked.failure)}); \`durable-webhooks entities retry\` or \`skip\` lets it go on.${this.link(`/events/${encodeURIComponent(parked.workflowId)}`)}`,
      data: { ...ref, eventId: parked.eventId, failure: withoutInternalAddresses(parked.failure) },
      unclaim: (db: Database) => unclaimParked(db, ref, parked.eventId),
    }));
  }

  private async send(alert: Alert): Promise<void> {
    if (this.config.webhook) {
      await this.messages.publish(ALERT_SCOPES.webhook, alert.key, { eventType: alert.type, payload: { ...alert.data, text: alert.text } });
    }
    if (this.config.slackUrl)
      await this.messages.publish(ALERT_SCOPES.slack, alert.key, { eventType: alert.type, payload: { text: slackEscaped(alert.text) } });
    this.logger.warn({ alert: alert.type, key: alert.key }, alert.text);
  }

  private link(path: string): string {
    return this.config.consoleUrl ? ` ${this.config.consoleUrl.replace(/\/$/, '')}${path}` : '';
  }
}

/**
 * Text as a Slack message shows it literally: `&`, `<` and `>` escaped as Slack documents, so a
 * sender-chosen event ID holding `<!channel>` or a link mentions and links nothing.
 * https://api.slack.com/reference/surfaces/formatting#escaping
 */
export function slackEscaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
