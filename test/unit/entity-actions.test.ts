import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { ENTITY_ACTIONS } from '../../contracts';
import { buildProgram } from '../../src/cli/program';
import { EntityPage } from '../../src/http/console/pages/entity';
import { ENTITY_OPERATOR_ACTIONS } from '../../src/operator/entity-actions';
import type { EntityOperations, EntityView } from '../../src/temporal/entities';
import type { EventOperations } from '../../src/temporal/operations';
import { serveAdmin } from '../support/admin-server';

/**
 * The decisions for a parked key are declared once (src/operator/entity-actions.ts); the CLI, /admin
 * and the console each make theirs of every declaration, with the one input check of the event actions.
 */
const parkedView = {
  flow: 'fulfilShopifyOrder',
  source: 'shopify',
  key: '1',
  order: 'latest',
  coalesce: null,
  burst: null,
  last: null,
  running: null,
  pending: [],
  parked: { eventId: 'evt_failed', workflowId: 'evt_failed', failure: 'the address was refused' },
  applied: 0,
  superseded: 0,
  workflowId: 'entity-fulfilShopifyOrder-shopify-1',
  open: true,
  uiUrl: 'http://ui.test',
} as unknown as EntityView;

it('declares every decision the entity workflow takes, and nothing more', () => {
  expect(ENTITY_OPERATOR_ACTIONS.map((action) => action.name).sort()).toEqual([...ENTITY_ACTIONS].sort());
});

it('makes an `entities` command of each decision, its fields as options with their defaults', () => {
  const entities = buildProgram().commands.find((command) => command.name() === 'entities')!;
  for (const action of ENTITY_OPERATOR_ACTIONS) {
    const command = entities.commands.find((each) => each.name() === action.name);
    expect(command?.registeredArguments.map((each) => each.name())).toEqual(['flow', 'key']);
    const reason = command!.options.find((option) => option.long === '--reason');
    expect({ action: action.name, default: reason?.defaultValue }).toEqual({
      action: action.name,
      default: action.name === 'retry' ? 'retried once the cause was fixed' : undefined,
    });
  }
});

describe('/admin/entities', () => {
  const calls: unknown[][] = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return parkedView;
    };
  // Only the part of the entity operations the decisions call; each call recorded with what it was given.
  const entities = { skip: record('skip'), retry: record('retry') } as unknown as EntityOperations;
  let admin: Awaited<ReturnType<typeof serveAdmin>>;
  beforeAll(async () => {
    admin = await serveAdmin({ operations: {} as EventOperations, entities });
  });
  afterAll(() => admin.close());
  beforeEach(() => calls.splice(0));
  const post = (path: string, body: unknown) => admin.post(path, body);

  it.each([
    ['skip', { reason: 'told by phone' }, ['skip', 'fulfilShopifyOrder', '1', { source: 'shopify', by: 'admin token "ops"', reason: 'told by phone' }]],
    ['retry', {}, ['retry', 'fulfilShopifyOrder', '1', { source: 'shopify', by: 'admin token "ops"', reason: 'retried once the cause was fixed' }]],
  ])('POST /admin/entities/fulfilShopifyOrder/1/%s decides, as the token', async (name, body, call) => {
    const response = await post(`/entities/fulfilShopifyOrder/1/${name}?source=shopify`, body);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ key: '1', action: name });
    expect(calls).toEqual([call]);
  });

  it.each([
    ['a skip without a reason', 'skip', {}, `Give "reason" to skip: why; kept in the entity's history.`],
    ['a member the decision does not take, by name', 'retry', { reason: 'x', to: 'first' }, 'retry takes "reason", not "to".'],
    ['a reason that is not text', 'skip', { reason: 7 }, `"reason" must be text: why; kept in the entity's history.`],
  ])('refuses %s, deciding nothing', async (_what, name, body, detail) => {
    const refused = await post(`/entities/fulfilShopifyOrder/1/${name}`, body);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ detail });
    expect(calls).toEqual([]);
  });
});

it("offers an admin each decision on a parked key's console page, and a viewer none", () => {
  const buttons = (role: 'admin' | 'viewer') =>
    [
      ...renderToStaticMarkup(createElement(EntityPage, { session: { tokenName: 'ops', role, tokenSha256: '', csrf: 'c' }, view: parkedView })).matchAll(
        /formAction="\/console\/entities\/fulfilShopifyOrder\/shopify\/1\/(\w+)"[^>]*>([^<]+)</g,
      ),
    ].map((match) => [match[1], match[2]]);
  expect(buttons('admin')).toEqual([
    ['retry', 'Retry evt_failed'],
    ['skip', 'Skip it'],
  ]);
  expect(buttons('viewer')).toEqual([]);
});
