import { Command } from 'commander';
import { EVENT_ACTIONS } from '../operator/event-actions';
import type { EventView } from '../temporal/event-view';
import type { EventFilter, EventSummary } from '../temporal/visibility';
import { addFilterOptions, givenFilter } from './bulk';
import { eventActionCommand } from './event-actions';
import { createOperations, type Operations } from './operations';
import { jsonOption, print } from './output';

/** `durable-webhooks events …`: inspect event workflows by event ID, and act on them (src/operator/event-actions.ts), with Temporal's own settings. */
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
    .command('query')
    .argument('<eventId>')
    .argument('<name>', 'the query, e.g. status')
    .addOption(json)
    .action(async (eventId: string, name: string, options: { json?: boolean }) => {
      const answer = await (await ops()).operations.query(eventId, name);
      print(options.json, answer, () => JSON.stringify(answer, null, 2));
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

  for (const action of EVENT_ACTIONS) events.addCommand(eventActionCommand(action, ops));
  return events;
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
