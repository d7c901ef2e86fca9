import { Command } from 'commander';
import type { EntityRecord } from '../db/entities';
import { ENTITY_OPERATOR_ACTIONS } from '../operator/entity-actions';
import { readActionInput } from '../operator/event-actions';
import type { EntityView } from '../temporal/entities';
import { createOperations, type Operations } from './operations';
import { operator } from './options';
import { jsonOption, print } from './output';

/** `durable-webhooks entities …`: a keyed flow's keys (docs/entities.md), and the failed event one waits on. */
export function entitiesCommand(): Command {
  const entities = new Command('entities').description("A keyed flow's keys: the last event applied, what waits, and the failed event a key is parked on.");
  let operations: Promise<Operations> | undefined;
  const ops = async () => (await (operations ??= createOperations())).entities;
  const json = jsonOption();

  entities
    .command('list')
    .description('Keys, most recently changed first, from the database.')
    .option('--flow <flow>', 'of this keyed flow')
    .option('--parked', 'only keys waiting on a failed event')
    .option('--limit <n>', 'at most this many', (value) => Number(value), 100)
    .addOption(json)
    .action(async (options: { flow?: string; parked?: boolean; limit: number; json?: boolean }) => {
      const found = await (await ops()).list(options);
      print(options.json, found, () => (found.length === 0 ? 'No keys.' : found.map(line).join('\n')));
    });

  entities
    .command('show')
    .argument('<flow>')
    .argument('<key>')
    .option('--source <source>', 'the source, when the key is at more than one')
    .description('The key: its last applied event and version, the event running, those waiting, the failed one it is parked on, and the Web UI link.')
    .addOption(json)
    .action(async (flow: string, key: string, options: { source?: string; json?: boolean }) => {
      const view = await (await ops()).show(flow, key, options.source);
      print(options.json, view, () => showText(view));
    });

  for (const action of ENTITY_OPERATOR_ACTIONS) {
    const command = entities
      .command(action.name)
      .description(action.help)
      .argument('<flow>')
      .argument('<key>')
      .option('--source <source>', 'the source, when the key is at more than one');
    for (const field of action.fields) command.option(`--${field.name} <${field.value ?? field.name}>`, field.help, field.default);
    command.addOption(json).action(async (flow: string, key: string, options: Record<string, unknown> & { source?: string; json?: boolean }) => {
      const input = readActionInput(action, Object.fromEntries(action.fields.map((field) => [field.name, options[field.name]])));
      const view = await action.run(await ops(), flow, key, input, { source: options.source, by: operator() });
      print(options.json, { ...view, action: action.name }, () => action.said(flow, key, view));
    });
  }
  return entities;
}

function line(record: EntityRecord): string {
  const parked = record.parked ? `  PARKED on ${record.parked.eventId}: ${record.parked.failure}` : '';
  return `${record.flow}  ${record.source}  ${record.key}  last ${record.last?.eventId ?? 'none'}${parked}`;
}

/** The events waiting: those the entity's run carries, by ID, then how many wait in the database. */
export function waitingText({ pending, stored }: EntityView): string {
  const inRun = pending.map((request) => request.eventId).join(', ');
  const inDatabase = stored && `${stored.count} ${inRun ? 'more ' : ''}kept in the database (the oldest: ${stored.oldest.eventId})`;
  return [inRun, inDatabase].filter(Boolean).join(', and ') || 'none';
}

function showText(view: EntityView): string {
  return [
    `${view.flow} key ${view.key} at ${view.source} (${view.order})${view.open ? '' : ', at rest'}`,
    `  last applied  ${view.last ? `${view.last.eventId} (version ${JSON.stringify(view.last.version)})` : 'none'}`,
    `  running       ${view.running?.eventId ?? 'nothing'}`,
    `  waiting       ${waitingText(view)}`,
    ...(view.parked ? [`  PARKED on     ${view.parked.eventId}: ${view.parked.failure} (durable-webhooks entities skip|retry ${view.flow} ${view.key})`] : []),
    ...(view.applied === null ? [] : [`  this run      ${view.applied} applied, ${view.superseded} superseded`]),
    `  Web UI        ${view.uiUrl}`,
  ].join('\n');
}
