import { randomUUID } from 'node:crypto';
import { BULK_ACTIONS, type BulkActionName, type BulkItemResult } from '../../contracts';
import { OperationRejectedError } from '../core/errors';
import type { ErasureReport } from '../db/erasure';
import { flowNamed } from '../flows';
import type { EventOperations } from '../temporal/operations';
import { parseResetTarget, type ResetTarget } from '../temporal/reset-points';

/**
 * An operator's action on one event, declared once: what it takes, what it does, and its words. The
 * CLI (`events <action>`), `/admin` (`POST /admin/events/:eventId/<action>`) and the console (the
 * event page's confirmation) each derive their form of it from the declaration, so a new action is
 * one declaration here and nothing else. The operations (`EventOperations`) check their own input
 * (a blank reason, a signal the flow does not take); `readActionInput` checks only the shapes.
 */
export interface EventAction<Answer extends object = object> {
  name: string;
  /** What it does, in one line: the CLI's description. */
  help: string;
  /** What it takes, besides the event. */
  fields: readonly ActionField[];
  /** The event statuses the console offers it at; signals are offered as the flow declares them. */
  offeredAt: readonly string[] | 'always';
  /** What it will do, in words: the console's confirmation. A signal's checks its argument first. */
  confirm(operations: EventOperations, eventId: string, input: ActionInput): Promise<string>;
  /** What the console says once it is done. */
  done: string;
  /** 202 (asked of the workflow, which acts later) rather than 200. */
  accepted?: boolean;
  run(operations: EventOperations, eventId: string, input: ActionInput, by: string): Promise<Answer>;
  /** The CLI's line for the answer. */
  said(eventId: string, answer: Answer): string;
  /** Why nothing was done, when the answer says so (a retry of a completed event): the CLI exits 1 on `failed`, the console shows it as a refusal. */
  undone?(answer: Answer): 'skipped' | 'failed' | undefined;
  /** A bulk job's reason when the operator gives none (`events cancel --status running`). */
  bulkReason?(input: ActionInput): string;
}

/** What an action takes: the names are the CLI's options (`--reason`), `/admin`'s JSON members and the console's form fields. */
export interface ActionInput {
  reason?: string;
  /** A reset's point: first, last-task, last-failure or a history event ID. */
  to?: ResetTarget;
  /** A signal's name, and its argument. */
  signal?: string;
  data?: unknown;
  /** For an erasure: whom it answers (kept as `requestedBy`); who acts is the surface's own (a token's name, the CLI's user). */
  by?: string;
}

export interface ActionField {
  name: keyof ActionInput;
  help: string;
  /** Without it, the action is refused (the console always asks a reason where one is taken). */
  required?: boolean;
  /** Taken when it is not given, on the CLI and `/admin`. */
  default?: string;
  /** The CLI takes it as an argument after the event ID (`events signal <eventId> <name>`), not as an option. */
  argument?: boolean;
  /** What the CLI's option names its value (`--data <json>`); the field's name without it. */
  value?: string;
}

/** A reason, kept where the action leaves its trace. */
export const reason = (where: string, extra: Omit<ActionField, 'name' | 'help'> = { required: true }): ActionField => ({
  name: 'reason',
  help: `why; kept in ${where}`,
  ...extra,
});

const signal: EventAction<{ eventId: string; signal: string; status: 'sent' }> = {
  name: 'signal',
  help: 'Send one of the signals the flow declares, e.g. approve or reject for a held order.',
  fields: [
    { name: 'signal', help: 'the signal, e.g. approve or reject for a held order', required: true, argument: true },
    { name: 'data', help: 'the signal argument, as JSON', value: 'json' },
  ],
  offeredAt: [],
  async confirm(operations, eventId, input) {
    const declared = flowNamed((await operations.show(eventId)).workflowType)?.signals.find((each) => each.name === input.signal);
    if (!declared) throw new OperationRejectedError(`Event ${eventId}'s flow has no signal "${input.signal}".`);
    const checked = declared.read(input.data, { workflowId: eventId });
    if (!checked.ok) throw new OperationRejectedError(`${checked.error}.`);
    return `Sends ${input.signal} to event ${eventId}${input.data === undefined ? '' : ` with ${JSON.stringify(checked.value)}`}: it ${declared.description}.`;
  },
  done: 'The signal was sent.',
  accepted: true,
  async run(operations, eventId, input) {
    await operations.signal(eventId, input.signal!, input.data);
    return { eventId, signal: input.signal!, status: 'sent' };
  },
  said: (eventId, answer) => `Sent ${answer.signal} to ${eventId}.`,
  bulkReason: (input) => `signal ${input.signal}`,
};

const cancel: EventAction<{ eventId: string; status: 'cancel requested' }> = {
  name: 'cancel',
  help: 'Ask a running event workflow to cancel: it stops at its next step and is recorded as failed (cancelled).',
  fields: [],
  offeredAt: ['running', 'stuck'],
  confirm: async (_operations, eventId) =>
    `Asks event ${eventId}'s workflow to cancel: it stops at its next step and is recorded as failed (cancelled) in the ledger.`,
  done: 'Cancellation was requested.',
  accepted: true,
  async run(operations, eventId) {
    await operations.cancel(eventId);
    return { eventId, status: 'cancel requested' };
  },
  said: (eventId) => `Cancellation requested for ${eventId}.`,
  bulkReason: () => 'cancelled in bulk',
};

const terminate: EventAction<{ eventId: string; status: 'terminated' }> = {
  name: 'terminate',
  help: 'Stop a running event workflow at once, running no more of its code; the ledger records it as failed (terminated).',
  fields: [reason('the history and the ledger')],
  offeredAt: ['running', 'stuck'],
  confirm: async (_operations, eventId) =>
    `Terminates event ${eventId}'s workflow at once: none of its code runs again, not even its clean-up, and the ledger records it as failed (terminated) with your reason.`,
  done: 'The event was terminated.',
  async run(operations, eventId, input) {
    await operations.terminate(eventId, input.reason ?? '');
    return { eventId, status: 'terminated' };
  },
  said: (eventId) => `Terminated ${eventId}.`,
};

const retry: EventAction<BulkItemResult> = {
  name: 'retry',
  help: 'Run a failed (or timed-out, cancelled, terminated) event again from just before its failure, once its cause is fixed; a completed event is left alone (skipped: completed), so nothing is done twice.',
  fields: [reason('the history', { required: true, default: 'retried once the cause was fixed' })],
  offeredAt: ['failed'],
  confirm: async (_operations, eventId) =>
    `Retries event ${eventId}: if it failed, its last run is reset to its last failure and runs on from there. It keeps its ledger claim, so no step that finished (a charge, an email) runs again. A completed or running event is left alone.`,
  done: 'The event was reset to its last failure and runs again.',
  run: (operations, eventId, input) => operations.apply('retry', eventId, { reason: input.reason ?? '', requestId: randomUUID() }),
  said: (eventId, answer) =>
    `${answer.outcome === 'done' ? 'Retried' : answer.outcome === 'skipped' ? 'Skipped' : 'Not retried'} ${eventId}: ${answer.detail}.`,
  undone: (answer) => (answer.outcome === 'done' ? undefined : answer.outcome),
};

const reset: EventAction<{ eventId: string; runId: string; resetToEventId: number }> = {
  name: 'reset',
  help: 'Reset the event to a point of its history: a new run replays up to there and continues; finished steps are not repeated, the ledger answers them.',
  fields: [{ name: 'to', help: 'first | last-task | last-failure | <historyEventId>', default: 'last-failure', value: 'point' }, reason('the history')],
  offeredAt: ['failed'],
  confirm: async (_operations, eventId) =>
    `Resets event ${eventId} to its last failure: a new run replays its history up to there and continues. Finished steps are not repeated; the ledger answers them.`,
  done: 'The event was reset to its last failure.',
  run: (operations, eventId, input) => operations.reset(eventId, input.to ?? 'last-failure', input.reason ?? ''),
  said: (eventId, answer) => `Reset ${eventId} to history event ${answer.resetToEventId}; new run ${answer.runId}`,
};

const erase: EventAction<ErasureReport> = {
  name: 'erase',
  help: "Remove the event's personal data from every store (body, application rows, ledger results), recorded with who and why.",
  fields: [
    reason('the ledger, e.g. the erasure request it answers'),
    { name: 'by', help: 'whom the erasure answers; kept in the ledger beside who erased', value: 'who' },
  ],
  offeredAt: 'always',
  confirm: async (_operations, eventId) =>
    `Erases event ${eventId}'s personal data from every store: its stored body and headers, its Temporal history and the rows it wrote. This cannot be undone; the erasure itself is recorded with your reason.`,
  done: "The event's personal data was erased.",
  run: (operations, eventId, input, by) => operations.erase(eventId, { by, requestedBy: input.by, reason: input.reason ?? '' }),
  said: (eventId, report) =>
    [
      `${report.erasedNow ? 'Erased' : 'Already erased'} ${eventId} at ${report.erasedAt} by ${report.erasedBy}${report.requestedBy ? ` for ${report.requestedBy}` : ''} (${report.reason}).`,
      `  body store: ${report.bodyStored ? 'body and signature headers removed' : 'no body stored'} · orders: ${report.ordersCleared} · subscriptions: ${report.subscriptionsCleared} · Temporal: ${report.temporal}`,
    ].join('\n'),
};

/** Every operator action on one event, in the order the CLI's help and the console list them. */
export const EVENT_ACTIONS: readonly EventAction[] = [signal, cancel, terminate, retry, reset, erase] as EventAction[];

/** The action of that name; undefined for none. */
export function eventActionNamed(name: string): EventAction | undefined {
  return EVENT_ACTIONS.find((action) => action.name === name);
}

/** Whether the action also acts on many events by a filter, as a bulk job (src/temporal/bulk-jobs.ts). */
export function actsInBulk(action: EventAction): action is EventAction & { name: BulkActionName } {
  return (BULK_ACTIONS as readonly string[]).includes(action.name);
}

/**
 * The one check of an action's input, on one event or on a key (src/operator/entity-actions.ts),
 * whichever surface gives it: each field the action declares, as text (a signal's argument as any
 * JSON value), with its default; a required one given; the reset point read. Members the action
 * does not take are refused by name.
 */
export function readActionInput(action: Pick<EventAction, 'name' | 'fields'>, given: unknown): ActionInput {
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new OperationRejectedError(`${action.name} takes an object of ${action.fields.map((field) => `"${field.name}"`).join(', ') || 'no members'}.`);
  const taken = new Set<string>(action.fields.map((field) => field.name));
  const members = given as Record<string, unknown>;
  const unknown = Object.keys(members).filter((name) => members[name] !== undefined && !taken.has(name));
  if (unknown.length > 0)
    throw new OperationRejectedError(
      `${action.name} takes ${action.fields.map((field) => `"${field.name}"`).join(', ') || 'nothing more'}, not ${unknown.map((name) => `"${name}"`).join(', ')}.`,
    );
  const input: ActionInput = {};
  for (const field of action.fields) {
    const value = members[field.name] ?? field.default;
    if (value === undefined) {
      if (field.required) throw new OperationRejectedError(`Give "${field.name}" to ${action.name}: ${field.help}.`);
      continue;
    }
    if (field.name === 'data') input.data = value;
    else if (typeof value !== 'string') throw new OperationRejectedError(`"${field.name}" must be text: ${field.help}.`);
    else if (field.name === 'to') input.to = parseResetTarget(value);
    else input[field.name] = value;
  }
  return input;
}
