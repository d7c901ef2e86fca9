import { Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { subscriberWorkflowId } from '../../contracts';
import { OperationRejectedError } from '../core/errors';
import type { EventView } from '../temporal/event-view';
import { parseResetTarget } from '../temporal/reset-points';
import type { EventFilter, EventSummary } from '../temporal/visibility';
import { addBulkOptions, addFilterOptions, BULK_COMMANDS, givenFilter, runBulk, type BulkOptions } from './bulk';
import { createOperations, type Operations } from './operations';
import { jsonOption, print } from './output';

/** `durable-webhooks events …`: operate on event workflows by event ID, with Temporal's own settings. */
export function eventsCommand(): Command {
  const events = new Command('events').description('Inspect and operate on events by event ID (the workflow ID).');
  let operations: Promise<Operations> | undefined;
  const ops = () => (operations ??= createOperations());
  const json = jsonOption();

  events
    .command('show')
    .argument('<eventId>')
    .description('Status, type, source, times, steps done, result or failure, and the Web UI link.')
    .addOption(json)
    .action(async (eventId: string, options: { json?: boolean }) => {
      const view = await (await ops()).operations.show(eventId);
      print(options.json, view, () => showText(view));
    });

  addFilterOptions(events.command('list').description('Events from Temporal visibility, newest first, by the filter the bulk commands take.'))
    .option('--limit <n>', 'at most this many', (value) => Number(value), 100)
    .addOption(json)
    .action(async (options: EventFilter & { limit: number; json?: boolean }) => {
      const found = await (await ops()).operations.list(givenFilter(options) ?? {}, options.limit);
      print(options.json, found, () => table(found));
    });

  events
    .command('signal')
    .argument('<eventId-or-name>', 'the event, then the signal; with a filter (--source, --status, …), the signal alone')
    .argument('[name]', 'the signal, e.g. approve or reject for a held order')
    .option('--data <json>', 'the signal argument, as JSON')
    .addOption(json)
    .action(async (first: string, second: string | undefined, options: { data?: string; json?: boolean } & BulkOptions) => {
      const data = options.data === undefined ? undefined : parseJson(options.data);
      if (givenFilter(options)) {
        if (second !== undefined)
          throw new OperationRejectedError('With a filter, name only the signal: durable-webhooks events signal approve --source … --status running.');
        return runBulk(await ops(), { action: 'signal', signal: { name: first, data }, reason: options.reason ?? `signal ${first}` }, options);
      }
      if (second === undefined)
        throw new OperationRejectedError(
          'Name the event and the signal (events signal <eventId> <name>), or the signal and a filter (--source, --type, --status, --since).',
        );
      await (await ops()).operations.signal(first, second, data);
      print(options.json, { eventId: first, signal: second, status: 'sent' }, () => `Sent ${second} to ${first}.`);
    });

  events
    .command('query')
    .argument('<eventId>')
    .argument('<name>', 'the query, e.g. status')
    .addOption(json)
    .action(async (eventId: string, name: string, options: { json?: boolean }) => {
      const answer = await (await ops()).operations.query(eventId, name);
      print(options.json, answer, () => JSON.stringify(answer, null, 2));
    });

  events
    .command('cancel')
    .argument('[eventId]', 'the event; or a filter (--source, --status, …) for many')
    .description('Ask a running event workflow to cancel; with a filter, every running match, as a job.')
    .addOption(json)
    .action(async (eventId: string | undefined, options: { json?: boolean } & BulkOptions) => {
      if (!eventId) return runBulk(await ops(), { action: 'cancel', reason: options.reason ?? 'cancelled in bulk' }, options);
      await (await ops()).operations.cancel(eventId);
      print(options.json, { eventId, status: 'cancel requested' }, () => `Cancellation requested for ${eventId}.`);
    });

  events
    .command('terminate')
    .argument('[eventId]', 'the event; or a filter (--source, --status, …) for many')
    .requiredOption('--reason <reason>', 'why; kept in the history')
    .addOption(json)
    .action(async (eventId: string | undefined, options: { reason: string; json?: boolean } & BulkOptions) => {
      if (!eventId) return runBulk(await ops(), { action: 'terminate', reason: options.reason }, options);
      await (await ops()).operations.terminate(eventId, options.reason);
      print(options.json, { eventId, status: 'terminated' }, () => `Terminated ${eventId}.`);
    });

  events
    .command('retry')
    .argument('[eventId]', 'the event; or a filter (--source, --status failed, …) for many')
    .description(
      'Run a failed (or timed-out, cancelled, terminated) event again from just before its failure, once its cause is fixed; a completed event is left alone (skipped: completed), so nothing is done twice.',
    )
    .option('--reason <reason>', 'why; kept in the history', 'retried once the cause was fixed')
    .addOption(json)
    .action(async (eventId: string | undefined, options: { reason: string; json?: boolean } & BulkOptions) => {
      if (!eventId) return runBulk(await ops(), { action: 'retry', reason: options.reason }, options);
      // With --flow, one subscriber of the event (docs/flows.md#routes); the event's other flows are left alone.
      const target = options.flow ? subscriberWorkflowId(eventId, options.flow) : eventId;
      const result = await (await ops()).operations.apply('retry', target, { reason: options.reason, requestId: randomUUID() });
      print(
        options.json,
        result,
        () => `${result.outcome === 'done' ? 'Retried' : result.outcome === 'skipped' ? 'Skipped' : 'Not retried'} ${target}: ${result.detail}.`,
      );
      if (result.outcome === 'failed') process.exitCode = 1;
    });

  events
    .command('verify')
    .argument('<eventId>')
    .description(
      "Check the stored body's signature again, with today's secrets (exit 1 when it does not verify; 0 when its body was purged after BODY_RETENTION).",
    )
    .addOption(json)
    .action(async (eventId: string, options: { json?: boolean }) => {
      const result = await (await ops()).operations.verify(eventId);
      const verdict = result.verified ? 'Verified' : result.body === 'purged' ? 'Body purged' : 'NOT verified';
      print(
        options.json,
        result,
        () => `${verdict}: ${eventId} (${result.source}, ${result.bytes} bytes, sha256 ${result.sha256}, received ${result.receivedAt}): ${result.detail}.`,
      );
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
      const report = await (await ops()).operations.erase(eventId, { by: options.by, reason: options.reason });
      print(options.json, report, () =>
        [
          `${report.erasedNow ? 'Erased' : 'Already erased'} ${eventId} at ${report.erasedAt} by ${report.erasedBy} (${report.reason}).`,
          `  body store: ${report.bodyStored ? 'body and signature headers removed' : 'no body stored'} · orders: ${report.ordersCleared} · subscriptions: ${report.subscriptionsCleared} · Temporal: ${report.temporal}`,
        ].join('\n'),
      );
    });

  events
    .command('reset')
    .argument('[eventId]', 'the event to reset; or a filter (--source, --status, --query, …) for many')
    .requiredOption('--to <point>', 'first | last-task | last-failure | <historyEventId>')
    .requiredOption('--reason <reason>', 'why; kept in the history')
    .addOption(json)
    .action(async (eventId: string | undefined, options: { to: string; reason: string; json?: boolean } & BulkOptions) => {
      const to = parseResetTarget(options.to);
      if (!eventId) return runBulk(await ops(), { action: 'reset', to: options.to, reason: options.reason }, options);
      const target = options.flow ? subscriberWorkflowId(eventId, options.flow) : eventId;
      const reset = await (await ops()).operations.reset(target, to, options.reason);
      print(options.json, reset, () => `Reset ${target} to history event ${reset.resetToEventId}; new run ${reset.runId}`);
    });

  for (const command of events.commands.filter((each) => BULK_COMMANDS.includes(each.name()))) addBulkOptions(command);
  return events;
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
    ...(view.tenant ? [`Tenant     ${view.tenant}`] : []),
    ...(view.errorClass ? [`Failed as  ${view.errorClass}`] : []),
    `Started    ${view.startTime}`,
    `Closed     ${view.closeTime ?? '-'}`,
    `Steps      ${view.progress ? view.progress.stepsDone.join(', ') || '(none yet)' : '(no worker answered the status query)'}`,
  ];
  if (view.progress?.waitingFor)
    lines.push(`Waiting    ${view.progress.waitingFor}${view.progress.awaiting?.until ? `, until ${view.progress.awaiting.until}` : ''}`);
  if (view.ledger) {
    lines.push(`Ledger     ${view.ledger.status}, claimed ${view.ledger.claimedAt}`);
    for (const step of view.ledger.steps) lines.push(`           ${step.step}${step.externalId ? ` → ${step.externalId}` : ''}  (${step.recordedAt})`);
    for (const charge of view.ledger.charges) {
      const detail = charge.failure ? `: ${charge.failure.message}` : charge.paymentIntentId ? ` → ${charge.paymentIntentId}` : '';
      lines.push(
        `Charge ${String(charge.attempt).padEnd(4)}${charge.outcome}${detail}  (key ${charge.idempotencyKey}, ${charge.paymentMethod ?? 'payment method not recorded'}, ${charge.startedAt})`,
      );
    }
  }
  if (view.body) {
    const { state, bytes, sha256, receivedAt, purgedAt } = view.body;
    const where = state === 'stored' ? 'stored' : state === 'purged' ? `purged at ${purgedAt}, past BODY_RETENTION` : 'erased';
    lines.push(`Body       ${bytes} bytes, sha256 ${sha256}, received ${receivedAt}: ${where}`);
  }
  if (view.erasure)
    lines.push(
      `Erased     ${view.erasure.erasedAt} by ${view.erasure.erasedBy}${view.erasure.requestedBy ? ` for ${view.erasure.requestedBy}` : ''}: ${view.erasure.reason}`,
    );
  if (view.result !== null) lines.push(`Result     ${JSON.stringify(view.result)}`);
  if (view.failure) lines.push('Failure', ...view.failure.map((cause, depth) => `${'  '.repeat(depth + 1)}${cause}`));
  lines.push(`UI         ${view.uiUrl}`);
  return lines.join('\n');
}

function table(events: EventSummary[]): string {
  if (events.length === 0) return 'No events match.';
  // The tenant and failure class columns only when some event has one.
  const tenants = events.some((event) => event.tenant);
  const classes = events.some((event) => event.errorClass);
  const rows = [
    ['EVENT', 'SOURCE', 'TYPE', 'STATUS', ...(tenants ? ['TENANT'] : []), ...(classes ? ['FAILED AS'] : []), 'STARTED'],
    ...events.map((event) => [
      event.eventId,
      event.source ?? '-',
      event.eventType ?? '-',
      event.status,
      ...(tenants ? [event.tenant ?? '-'] : []),
      ...(classes ? [event.errorClass ?? '-'] : []),
      event.startTime,
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
