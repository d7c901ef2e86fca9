import { Command, Option } from 'commander';
import { hostname, userInfo } from 'node:os';
import { loadReceiverConfig } from '../config';
import { openDatabase } from '../db/database';
import { SourceRegistry } from '../providers/registry';
import { OperationRejectedError } from '../errors';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { EventOperations, type EventView } from '../temporal/operations';
import { parseResetTarget } from '../temporal/reset-points';
import { EVENT_STATUSES, type EventFilter, type EventSummary } from '../temporal/visibility';
import { jsonOption, print } from './output';

/** `durable-webhooks events …`: operate on event workflows by event ID, with Temporal's own settings. */
export function eventsCommand(): Command {
  const events = new Command('events').description('Inspect and operate on events by event ID (the workflow ID).');
  let operations: Promise<EventOperations> | undefined;
  const ops = () => (operations ??= createOperations());
  const json = jsonOption();

  events
    .command('show')
    .argument('<eventId>')
    .description('Status, type, source, times, steps done, result or failure, and the Web UI link.')
    .addOption(json)
    .action(async (eventId: string, options: { json?: boolean }) => {
      const view = await (await ops()).show(eventId);
      print(options.json, view, () => showText(view));
    });

  events
    .command('list')
    .description('Events from Temporal visibility, newest first.')
    .option('--source <source>', 'only this source')
    .option('--type <type>', 'only this event type')
    .addOption(new Option('--via <via>', 'only events that came this way').choices(['delivery', 'backfill']))
    .addOption(new Option('--status <status>', 'only this status').choices([...EVENT_STATUSES]))
    .option('--since <when>', 'started since a duration ago (30m, 2h, 3d) or an ISO time')
    .option('--query <query>', 'a raw visibility query, ANDed with the rest')
    .option('--limit <n>', 'at most this many', (value) => Number(value), 100)
    .addOption(json)
    .action(async (options: EventFilter & { limit: number; json?: boolean }) => {
      const found = await (await ops()).list(options, options.limit);
      print(options.json, found, () => table(found));
    });

  events
    .command('signal')
    .argument('<eventId>')
    .argument('<name>', 'the signal, e.g. approve or reject for a held order')
    .option('--data <json>', 'the signal argument, as JSON')
    .addOption(json)
    .action(async (eventId: string, name: string, options: { data?: string; json?: boolean }) => {
      await (await ops()).signal(eventId, name, options.data === undefined ? undefined : parseJson(options.data));
      print(options.json, { eventId, signal: name, status: 'sent' }, () => `Sent ${name} to ${eventId}.`);
    });

  events
    .command('query')
    .argument('<eventId>')
    .argument('<name>', 'the query, e.g. status')
    .addOption(json)
    .action(async (eventId: string, name: string, options: { json?: boolean }) => {
      const answer = await (await ops()).query(eventId, name);
      print(options.json, answer, () => JSON.stringify(answer, null, 2));
    });

  events
    .command('cancel')
    .argument('<eventId>')
    .description('Ask a running event workflow to cancel.')
    .addOption(json)
    .action(async (eventId: string, options: { json?: boolean }) => {
      await (await ops()).cancel(eventId);
      print(options.json, { eventId, status: 'cancel requested' }, () => `Cancellation requested for ${eventId}.`);
    });

  events
    .command('terminate')
    .argument('<eventId>')
    .requiredOption('--reason <reason>', 'why; kept in the history')
    .addOption(json)
    .action(async (eventId: string, options: { reason: string; json?: boolean }) => {
      await (await ops()).terminate(eventId, options.reason);
      print(options.json, { eventId, status: 'terminated' }, () => `Terminated ${eventId}.`);
    });

  events
    .command('verify')
    .argument('<eventId>')
    .description("Check the stored body's signature again, with today's secrets (exit 1 when it does not verify; 0 when its body was purged after BODY_RETENTION).")
    .addOption(json)
    .action(async (eventId: string, options: { json?: boolean }) => {
      const result = await (await ops()).verify(eventId);
      const verdict = result.verified ? 'Verified' : result.body === 'purged' ? 'Body purged' : 'NOT verified';
      print(options.json, result, () => `${verdict}: ${eventId} (${result.source}, ${result.bytes} bytes, sha256 ${result.sha256}, received ${result.receivedAt}): ${result.detail}.`);
      if (!result.verified && result.body !== 'purged') process.exitCode = 1;
    });

  events
    .command('erase')
    .argument('<eventId>')
    .description("Remove the event's personal data from every store (body, application rows, ledger results), recorded with who and why.")
    .requiredOption('--reason <reason>', 'why, e.g. the erasure request it answers; kept in the ledger')
    .option('--by <who>', 'who asks; kept in the ledger', defaultOperator())
    .addOption(json)
    .action(async (eventId: string, options: { reason: string; by: string; json?: boolean }) => {
      const report = await (await ops()).erase(eventId, { by: options.by, reason: options.reason });
      print(options.json, report, () =>
        [
          `${report.erasedNow ? 'Erased' : 'Already erased'} ${eventId} at ${report.erasedAt} by ${report.erasedBy} (${report.reason}).`,
          `  body store: ${report.bodyStored ? 'body and signature headers removed' : 'no body stored'} · orders: ${report.ordersCleared} · subscriptions: ${report.subscriptionsCleared} · Temporal: ${report.temporal}`,
        ].join('\n'),
      );
    });

  events
    .command('reset')
    .argument('[eventId]', 'the event to reset; or use --query for many')
    .requiredOption('--to <point>', 'first | last-task | last-failure | <historyEventId>')
    .requiredOption('--reason <reason>', 'why; kept in the history')
    .option('--query <query>', 'reset every event this visibility query matches')
    .option('--yes', 'with --query: do it (without, only list what would be reset)')
    .addOption(json)
    .action(async (eventId: string | undefined, options: { to: string; reason: string; query?: string; yes?: boolean; json?: boolean }) => {
      const to = parseResetTarget(options.to);
      if (eventId && options.query) throw new OperationRejectedError('Give an event ID or --query, not both.');
      if (eventId) {
        const reset = await (await ops()).reset(eventId, to, options.reason);
        print(options.json, reset, () => `Reset ${eventId} to history event ${reset.resetToEventId}; new run ${reset.runId}`);
      } else if (options.query) {
        const results = await (await ops()).resetMatching({ query: options.query }, to, options.reason, { dryRun: !options.yes });
        print(options.json, results, () =>
          options.yes
            ? results.map((result) => `Reset ${result.eventId}; new run ${result.runId}`).join('\n')
            : [`Would reset ${results.length} event(s); run again with --yes to do it:`, ...results.map((result) => `  ${result.eventId}`)].join('\n'),
        );
      } else {
        throw new OperationRejectedError('Give an event ID, or --query for a batch.');
      }
    });

  return events;
}

/**
 * With DATABASE_URL, `show` adds the event's ledger record (claim and steps) to what Temporal says,
 * and `verify` and `erase` reach the body store; `verify` checks with the receiver's secrets.
 */
async function createOperations(): Promise<EventOperations> {
  const config = loadReceiverConfig();
  const db = config.databaseUrl ? await openDatabase({ url: config.databaseUrl, exitOnIdle: true }) : undefined;
  return new EventOperations(lazyClient(temporalSettings()), { uiUrl: config.temporalUiUrl, db, sources: new SourceRegistry(config.sources) });
}

/** `user@host`, for the erasure record when --by is not given. */
function defaultOperator(): string {
  return `${userInfo().username}@${hostname()}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new OperationRejectedError(`--data is not valid JSON: ${(error as Error).message}`);
  }
}

function showText(view: EventView): string {
  const lines = [
    `Event      ${view.eventId}`,
    `Source     ${view.source ?? '-'}`,
    `Type       ${view.eventType ?? '-'}  (workflow ${view.workflowType})`,
    `Status     ${view.status}`,
    `Summary    ${view.summary ?? '-'}`,
    `Started    ${view.startTime}`,
    `Closed     ${view.closeTime ?? '-'}`,
    `Steps      ${view.progress ? view.progress.stepsDone.join(', ') || '(none yet)' : '(no worker answered the status query)'}`,
  ];
  if (view.progress?.waitingFor) lines.push(`Waiting    ${view.progress.waitingFor}${view.progress.awaiting?.until ? `, until ${view.progress.awaiting.until}` : ''}`);
  if (view.ledger) {
    lines.push(`Ledger     ${view.ledger.status}, claimed ${view.ledger.claimedAt}`);
    for (const step of view.ledger.steps) lines.push(`           ${step.step}${step.externalId ? ` → ${step.externalId}` : ''}  (${step.recordedAt})`);
    for (const charge of view.ledger.charges) {
      const detail = charge.failure ? `: ${charge.failure.message}` : charge.paymentIntentId ? ` → ${charge.paymentIntentId}` : '';
      lines.push(`Charge ${String(charge.attempt).padEnd(4)}${charge.outcome}${detail}  (key ${charge.idempotencyKey}, ${charge.paymentMethod ?? 'payment method not recorded'}, ${charge.startedAt})`);
    }
  }
  if (view.body) {
    const { state, bytes, sha256, receivedAt, purgedAt } = view.body;
    const where = state === 'stored' ? 'stored' : state === 'purged' ? `purged at ${purgedAt}, past BODY_RETENTION` : 'erased';
    lines.push(`Body       ${bytes} bytes, sha256 ${sha256}, received ${receivedAt}: ${where}`);
  }
  if (view.erasure) lines.push(`Erased     ${view.erasure.erasedAt} by ${view.erasure.erasedBy}${view.erasure.requestedBy ? ` for ${view.erasure.requestedBy}` : ''}: ${view.erasure.reason}`);
  if (view.result !== null) lines.push(`Result     ${JSON.stringify(view.result)}`);
  if (view.failure) lines.push('Failure', ...view.failure.map((cause, depth) => `${'  '.repeat(depth + 1)}${cause}`));
  lines.push(`UI         ${view.uiUrl}`);
  return lines.join('\n');
}

function table(events: EventSummary[]): string {
  if (events.length === 0) return 'No events match.';
  const rows = [['EVENT', 'SOURCE', 'TYPE', 'STATUS', 'STARTED'], ...events.map((event) => [event.eventId, event.source ?? '-', event.eventType ?? '-', event.status, event.startTime])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}
