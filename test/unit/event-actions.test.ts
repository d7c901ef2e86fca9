import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { buildProgram } from '../../src/cli/program';
import { OperationRejectedError } from '../../src/core/errors';
import { EventPage, type EventPageData } from '../../src/http/console/pages/event';
import { actsInBulk, EVENT_ACTIONS, readActionInput, type EventAction } from '../../src/operator/event-actions';
import type { EventOperations } from '../../src/temporal/operations';
import { serveAdmin } from '../support/admin-server';
import type { EventView } from '../../src/temporal/event-view';

/**
 * The operator's actions on one event are declared once (src/operator/event-actions.ts); the CLI,
 * /admin and the console each make theirs of every declaration, with the one input check.
 */
const named = (name: string): EventAction => EVENT_ACTIONS.find((action) => action.name === name)!;

describe('readActionInput', () => {
  it('takes the declared fields with their defaults, reads a reset point, and passes a signal argument as any JSON', () => {
    expect(readActionInput(named('reset'), { reason: 'fixed' })).toEqual({ to: 'last-failure', reason: 'fixed' });
    expect(readActionInput(named('reset'), { to: '17', reason: 'fixed' })).toEqual({ to: 17, reason: 'fixed' });
    expect(readActionInput(named('retry'), {})).toEqual({ reason: 'retried once the cause was fixed' });
    expect(readActionInput(named('signal'), { signal: 'approve', data: [1, { by: 'ops' }] })).toEqual({ signal: 'approve', data: [1, { by: 'ops' }] });
    expect(readActionInput(named('cancel'), {})).toEqual({});
  });

  it.each([
    ['a member the action does not take, by name', 'cancel', { reason: 'x' }, 'cancel takes nothing more, not "reason".'],
    ['a required field left out', 'terminate', {}, 'Give "reason" to terminate: why; kept in the history and the ledger.'],
    [
      'a field that is not text',
      'erase',
      { reason: 'request 42', by: 7 },
      '"by" must be text: whom the erasure answers; kept in the ledger beside who erased.',
    ],
    ['a reset point that is none', 'reset', { to: 'sideways', reason: 'x' }, '"to" must be first, last-task, last-failure or a history event ID'],
    ['a body that is no object', 'signal', ['approve'], 'signal takes an object of "signal", "data".'],
  ])('refuses %s', (_what, name, given, message) => {
    const refused = () => readActionInput(named(name), given);
    expect(refused).toThrow(OperationRejectedError);
    expect(refused).toThrow(message);
  });
});

it('makes an `events` command of each action: its fields as options (a signal name as an argument), the bulk filter where it acts in bulk', () => {
  const events = buildProgram().commands.find((command) => command.name() === 'events')!;
  for (const action of EVENT_ACTIONS) {
    const command = events.commands.find((each) => each.name() === action.name);
    expect({ action: action.name, found: command !== undefined }).toEqual({ action: action.name, found: true });
    const longs = command!.options.map((option) => option.long);
    for (const field of action.fields)
      expect(field.argument ? command!.registeredArguments.map((each) => each.name()) : longs).toContain(field.argument ? field.name : `--${field.name}`);
    expect({ action: action.name, bulk: longs.includes('--dry-run') }).toEqual({ action: action.name, bulk: actsInBulk(action) });
  }
});

describe('/admin', () => {
  const calls: unknown[][] = [];
  const record =
    (name: string, answer: unknown = undefined) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return answer;
    };
  // Only the operations' part the actions call; each call recorded with what it was given.
  const operations = {
    signal: record('signal'),
    cancel: record('cancel'),
    terminate: record('terminate'),
    apply: record('apply', { eventId: 'evt_1', outcome: 'done', detail: 'reset to history event 4' }),
    reset: record('reset', { eventId: 'evt_1', runId: 'run_2', resetToEventId: 4 }),
    erase: record('erase', { eventId: 'evt_1', erasedNow: true }),
  } as unknown as EventOperations;
  let admin: Awaited<ReturnType<typeof serveAdmin>>;
  beforeAll(async () => {
    admin = await serveAdmin({ operations });
  });
  afterAll(() => admin.close());
  beforeEach(() => calls.splice(0));
  const post = (path: string, body: unknown) => admin.post(path, body);

  it.each([
    ['signal', { signal: 'approve', data: { by: 'ops' } }, 202, ['signal', 'evt_1', 'approve', { by: 'ops' }]],
    ['cancel', {}, 202, ['cancel', 'evt_1']],
    ['terminate', { reason: 'placed twice' }, 200, ['terminate', 'evt_1', 'placed twice']],
    ['retry', {}, 200, ['apply', 'retry', 'evt_1', { reason: 'retried once the cause was fixed', requestId: expect.any(String) }]],
    ['reset', { reason: 're-run' }, 200, ['reset', 'evt_1', 'last-failure', 're-run']],
    [
      'erase',
      { reason: 'request 42', by: 'dpo@example.com' },
      200,
      ['erase', 'evt_1', { by: 'admin token "ops"', requestedBy: 'dpo@example.com', reason: 'request 42' }],
    ],
  ])('POST /admin/events/evt_1/%s does the action, as the token', async (name, body, status, call) => {
    const response = await post(`/events/evt_1/${name}`, body);
    expect(response.status).toBe(status);
    expect(calls).toEqual([call]);
  });

  it('serves every declared action, and refuses a member an action does not take, doing nothing', async () => {
    expect(EVENT_ACTIONS.map((action) => action.name)).toEqual(['signal', 'cancel', 'terminate', 'retry', 'reset', 'erase']);
    const refused = await post('/events/evt_1/cancel', { reason: 'x', to: 'first' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ detail: 'cancel takes nothing more, not "reason", "to".' });
    expect(calls).toEqual([]);
  });
});

it("offers on the console's event page the actions that apply to its status, each through its confirmation", () => {
  const offered = (status: string) => {
    const data: EventPageData = {
      eventId: 'evt_1',
      listed: undefined,
      view: {
        eventId: 'evt_1',
        status,
        workflowType: 'chargeOrder',
        startTime: '2026-12-06T10:00:00.000Z',
        closeTime: null,
        summary: null,
        progress: null,
        ledger: null,
        erasure: null,
        body: null,
        result: null,
        failure: null,
        pendingActivities: [],
        uiUrl: 'http://ui.test',
      } as unknown as EventView,
      delivery: undefined,
      verification: undefined,
      signals: [],
      audit: [],
    };
    const html = renderToStaticMarkup(createElement(EventPage, { session: { tokenName: 'ops', role: 'admin', tokenSha256: '', csrf: 'c' }, data }));
    return [...html.matchAll(/href="\/console\/events\/evt_1\/confirm\/(\w+)"/g)].map((match) => match[1]);
  };
  expect(offered('running')).toEqual(['cancel', 'terminate', 'erase']);
  expect(offered('failed')).toEqual(['retry', 'reset', 'erase']);
  expect(offered('completed')).toEqual(['erase']);
});
