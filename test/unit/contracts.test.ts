import * as workflows from '../../workflows';
import { chargeOrderFlow, recordEventFlow, subscriptionEntityFlow } from '../../workflows';
import {
  defineFlow,
  MAX_FIELD_LENGTH,
  readOptionalStrings,
  readPointer,
  readRetryPayment,
  readSubscriptionUpdate,
  subscriptionWorkflowId,
} from '../../contracts';
import { defaultRoutes, FLOWS } from '../../src/flows';

const refused = (error: string | RegExp) => ({ ok: false, error: typeof error === 'string' ? error : expect.stringMatching(error) });

describe('flow declarations', () => {
  it('declare every workflow the worker registers, once, under the name it is exported as', () => {
    const exported = Object.entries(workflows).filter(([, value]) => typeof value === 'function');
    expect(exported.map(([name]) => name).sort()).toEqual(FLOWS.map((flow) => flow.name).sort());
    for (const [name, workflow] of exported) expect(FLOWS.filter((flow) => flow.workflow === workflow).map((flow) => flow.name)).toEqual([name]);
  });

  it('give each flow a versioning behaviour with its reason; auto-upgrade ones leave it to the worker, pinned ones carry it', () => {
    for (const flow of FLOWS) {
      expect({ flow: flow.name, behavior: flow.versioning.behavior }).toEqual({ flow: flow.name, behavior: expect.stringMatching(/^(AUTO_UPGRADE|PINNED)$/) });
      expect(flow.versioning.why.length).toBeGreaterThan(20);
      // An unversioned worker must report no behaviour (Temporal refuses it): a versioned one reports AUTO_UPGRADE by default.
      if (flow.versioning.behavior === 'AUTO_UPGRADE') expect(flow.workflow).not.toHaveProperty('workflowDefinitionOptions');
    }
    // It waits days for retryPayment, longer than any build is kept: it must move to new builds.
    expect(chargeOrderFlow.versioning.behavior).toBe('AUTO_UPGRADE');
    const pinned = defineFlow({ workflow: async function quickFlow() {}, description: 'test', versioning: { behavior: 'PINNED', why: 'ends in seconds' } });
    expect(typeof (pinned.workflow as { workflowDefinitionOptions?: unknown }).workflowDefinitionOptions).toBe('function');
  });

  it('give each flow signals and queries with unique names, and every event flow the status query', () => {
    for (const flow of FLOWS) {
      const signals = flow.signals.map((signal) => signal.name);
      expect(new Set(signals).size).toBe(signals.length);
      const queries = flow.queries.map((query) => query.name);
      expect(new Set(queries).size).toBe(queries.length);
      if (!flow.internal) expect(queries).toContain('status');
      if (flow.internal) expect(flow.handles).toEqual({});
    }
    expect(chargeOrderFlow.signals.filter((signal) => signal.onlyWhileAwaited).map((signal) => signal.name)).toEqual(['retryPayment']);
  });

  it("route each provider kind's event type to one flow at most", () => {
    expect(defaultRoutes(FLOWS).get('standard-webhooks')?.get('order.created')).toBe(chargeOrderFlow);
    const rival = defineFlow({
      workflow: async function rivalOrders() {},
      description: 'test',
      handles: { 'standard-webhooks': ['order.created'] },
      versioning: { behavior: 'AUTO_UPGRADE', why: 'test' },
    });
    expect(() => defaultRoutes([...FLOWS, rival])).toThrow('Both chargeOrder and rivalOrders declare that they handle standard-webhooks "order.created".');
  });

  it('reads a retryPayment argument: a Stripe payment method ID, who asked, the attempt; anything else is named', () => {
    expect(readRetryPayment(undefined)).toEqual({ ok: true, value: {} });
    expect(readRetryPayment({ paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 })).toEqual({
      ok: true,
      value: { paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 },
    });
    expect(readRetryPayment({ paymentMethod: 'card_1NcAbC' })).toEqual({ ok: true, value: { paymentMethod: 'card_1NcAbC' } });
    expect(readRetryPayment('pm_card_visa')).toEqual(refused(/must be a JSON object/));
    expect(readRetryPayment([])).toEqual(refused(/must be a JSON object/));
    expect(readRetryPayment({ paymentMethod: '4242 4242 4242 4242' })).toEqual(refused(/paymentMethod must be a Stripe payment method ID/));
    expect(readRetryPayment({ paymentMethod: 'pm_' })).toEqual(refused(/paymentMethod must be/));
    expect(readRetryPayment({ paymentMethod: 42 })).toEqual(refused(/paymentMethod must be/));
    expect(readRetryPayment({ by: 7 })).toEqual(refused('by must be a string'));
    expect(readRetryPayment({ attempt: 1 })).toEqual(refused('attempt must be a whole number above 1'));
    expect(readRetryPayment({ attempt: 2.5 })).toEqual(refused('attempt must be a whole number above 1'));
    expect(readRetryPayment({ payment_method: 'pm_card_visa' })).toEqual(refused('retryPayment takes paymentMethod, by and attempt, not payment_method'));
  });

  it('reads approve and reject: nothing, or an object of the strings they take', () => {
    const reject = readOptionalStrings('reject', ['by', 'reason']);
    expect(reject(undefined)).toEqual({ ok: true, value: undefined });
    expect(reject({ by: 'ops', reason: 'fraud' })).toEqual({ ok: true, value: { by: 'ops', reason: 'fraud' } });
    expect(reject('fraud')).toEqual(refused('the reject argument must be a JSON object such as {"by":"…"}'));
    expect(reject({ by: 'ops', note: 'x' })).toEqual(refused('reject takes by and reason, not note'));
    expect(reject({ by: 7 })).toEqual(refused(`by must be a string of up to ${MAX_FIELD_LENGTH} characters`));
  });

  it("reads an operator's apply: an update of a stored event about this entity's subscription, and nothing else", () => {
    const target = { workflowId: subscriptionWorkflowId('sub_1') };
    const update = {
      source: 'stripe',
      eventId: 'evt_1',
      created: 1767225600,
      subscription: { id: 'sub_1', customer: 'cus_1', status: 'active' },
      deleted: false,
    };
    const [apply] = subscriptionEntityFlow.signals;
    expect(apply!.read(update, target)).toEqual({ ok: true, value: update });
    expect(apply!.read({ ...update, subscription: { id: 'sub_2', status: 'active' } }, target)).toEqual(
      refused(`subscription.id must be the subscription of ${target.workflowId}`),
    );
    expect(apply!.read({ ...update, subscription: { ...update.subscription, plan: 'gold' } }, target)).toEqual(
      refused('subscription takes id, customer and status, not plan'),
    );
    expect(apply!.read({ ...update, source: undefined }, target)).toEqual(refused(/source must name the source/));
    expect(apply!.read({ ...update, created: -1 }, target)).toEqual(refused(/created must be/));
    expect(apply!.read({ ...update, deleted: 'no' }, target)).toEqual(refused('deleted must be true or false'));
    expect(apply!.read({ ...update, status: 'active' }, target)).toEqual(refused('apply takes source, eventId, created, subscription and deleted, not status'));
    expect(readSubscriptionUpdate([], target)).toEqual(refused(/must be a JSON object/));
  });
});

describe("the routing fields copied into an event workflow's input", () => {
  it('reads JSON pointers with their escapes, own properties only', () => {
    const body = { 'a/b': [{ '~x': 1 }], data: { email: 'ada@example.com' } };
    expect(readPointer(body, '/a~1b/0/~0x')).toBe(1);
    expect(readPointer(body, '/data/email')).toBe('ada@example.com');
    expect(readPointer(body, '/data/missing/deeper')).toBeUndefined();
    expect(readPointer(body, '/constructor')).toBeUndefined();
    expect(readPointer(body, '/data/__proto__')).toBeUndefined();
  });

  it('copies IDs and amounts, only whether personal fields are there, and nothing long or structured', () => {
    const body = {
      data: {
        orderId: 'ord_1',
        amount: 4200,
        currency: { code: 'eur' },
        customer: 'c'.repeat(MAX_FIELD_LENGTH + 1),
        paymentMethod: 'pm_card_visa',
        email: 'ada@example.com',
      },
    };
    expect(chargeOrderFlow.readFields(body)).toEqual({ orderId: 'ord_1', amount: 4200, paymentMethod: 'pm_card_visa', email: true });
    expect(chargeOrderFlow.readFields({ data: { email: '' } })).toEqual({ email: false });
    expect(recordEventFlow.readFields(body)).toEqual({});
    expect(chargeOrderFlow.bodyField('email')).toEqual({ fromBody: '/data/email' });
  });
});
