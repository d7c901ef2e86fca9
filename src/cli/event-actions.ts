import { Command } from 'commander';
import { subscriberWorkflowId } from '../../contracts';
import { OperationRejectedError } from '../core/errors';
import { actsInBulk, readActionInput, type EventAction } from '../operator/event-actions';
import { addBulkOptions, givenFilter, runBulk, type BulkOptions } from './bulk';
import type { Operations } from './operations';
import { operator } from './options';
import { jsonOption, print } from './output';

type Options = BulkOptions & Record<string, unknown> & { json?: boolean };

/**
 * `durable-webhooks events <action>`, made from the action's declaration (src/operator/event-actions.ts):
 * its fields as options (one, such as a signal's name, as an argument after the event ID); with no
 * event ID, an action that acts in bulk takes a filter and runs as a job (`runBulk`). With `--flow`,
 * the event's subscriber of that flow (docs/flows.md#routes) is acted on, not the event.
 */
export function eventActionCommand(action: EventAction, ops: () => Promise<Operations>): Command {
  const bulk = actsInBulk(action);
  const argument = action.fields.find((field) => field.argument);
  const many = argument ? `with a filter (--source, --status, …) for many, the ${argument.name} alone` : 'or a filter (--source, --status, …) for many';
  const command = new Command(action.name).description(action.help).argument(bulk ? '[eventId]' : '<eventId>', bulk ? `the event; ${many}` : 'the event');
  if (argument) command.argument(`[${argument.name}]`, argument.help);
  for (const field of action.fields.filter((each) => !each.argument)) {
    const flags = `--${field.name} <${field.value ?? field.name}>`;
    if (field.default !== undefined) command.option(flags, field.help, field.default);
    else if (field.required) command.requiredOption(flags, field.help);
    else command.option(flags, field.help);
  }
  if (bulk) addBulkOptions(command);
  command.addOption(jsonOption());
  return command.action(async (...args: unknown[]) => {
    const options = args.at(-2) as Options;
    const [first, second] = args.slice(0, -2) as Array<string | undefined>;
    const given = (value: string | undefined) => ({
      ...Object.fromEntries(action.fields.map((field) => [field.name, field.name === 'data' ? jsonOfOption(options.data) : options[field.name]])),
      ...(argument && { [argument.name]: value }),
    });
    if (bulk && (argument ? givenFilter(options) !== undefined : first === undefined)) {
      if (second !== undefined)
        throw new OperationRejectedError(
          `With a filter, name only the ${argument!.name}: durable-webhooks events ${action.name} <${argument!.name}> --source … --status running.`,
        );
      const input = readActionInput(action, given(first));
      const reason = input.reason ?? options.reason ?? action.bulkReason?.(input);
      const signal = input.signal === undefined ? undefined : { name: input.signal, data: input.data };
      return runBulk(await ops(), { action: action.name, reason: reason!, to: options.to as string | undefined, signal }, options);
    }
    if (first === undefined || (argument && second === undefined))
      throw new OperationRejectedError(
        `Name the event${argument ? ` and the ${argument.name} (events ${action.name} <eventId> <${argument.name}>)` : ''}${bulk ? ', or a filter (--source, --type, --status, --since) for many' : ''}.`,
      );
    const target = options.flow ? subscriberWorkflowId(first, options.flow) : first;
    const answer = await action.run((await ops()).operations, target, readActionInput(action, given(second)), operator());
    print(options.json, answer, () => action.said(target, answer));
    if (action.undone?.(answer) === 'failed') process.exitCode = 1;
  });
}

/** `--data`'s JSON, refused by name when it is not JSON. */
function jsonOfOption(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new OperationRejectedError(`--data is not valid JSON: ${(error as Error).message}`);
  }
}
