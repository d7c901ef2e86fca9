import * as workflows from '../../workflows';
import { bodyField, eventFields, MAX_FIELD_LENGTH, readPointer, readRetryPayment, SIGNALS, SIGNALS_ONLY_WHILE_AWAITED, WorkflowType, type Workflows } from '../../contracts';

// A compile-time check (`npm run lint` type-checks the tests): every workflow the contracts name is
// exported by the worker's bundle entry with the signature clients start it with.
const implementations: Workflows = workflows;

describe('contracts', () => {
  it('names exactly the workflows the worker registers', () => {
    const exported = Object.entries(workflows)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name);
    expect(Object.values(WorkflowType).sort()).toEqual(exported.sort());
    for (const type of Object.values(WorkflowType)) expect(implementations[type]).toBe(workflows[type]);
  });

  it('lists signals only for workflows that exist, each with a unique name', () => {
    for (const [type, signals] of Object.entries(SIGNALS)) {
      expect(Object.values(WorkflowType)).toContain(type);
      const names = signals!.map((signal) => signal.name);
      expect(new Set(names).size).toBe(names.length);
    }
    const listed = Object.values(SIGNALS).flatMap((signals) => signals!.map((signal) => signal.name));
    for (const name of SIGNALS_ONLY_WHILE_AWAITED) expect(listed).toContain(name);
  });

  it('reads a retryPayment argument: a Stripe payment method ID, who asked, the attempt; anything else is named', () => {
    expect(readRetryPayment(undefined)).toEqual({});
    expect(readRetryPayment({ paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 })).toEqual({ paymentMethod: 'pm_card_visa', by: 'support', attempt: 2 });
    expect(readRetryPayment({ paymentMethod: 'card_1NcAbC' })).toEqual({ paymentMethod: 'card_1NcAbC' });
    expect(readRetryPayment('pm_card_visa')).toMatch(/must be a JSON object/);
    expect(readRetryPayment([])).toMatch(/must be a JSON object/);
    expect(readRetryPayment({ paymentMethod: '4242 4242 4242 4242' })).toMatch(/paymentMethod must be a Stripe payment method ID/);
    expect(readRetryPayment({ paymentMethod: 'pm_' })).toMatch(/paymentMethod must be/);
    expect(readRetryPayment({ paymentMethod: 42 })).toMatch(/paymentMethod must be/);
    expect(readRetryPayment({ by: 7 })).toBe('by must be a string');
    expect(readRetryPayment({ attempt: 1 })).toBe('attempt must be a whole number above 1');
    expect(readRetryPayment({ attempt: 2.5 })).toBe('attempt must be a whole number above 1');
    expect(readRetryPayment({ payment_method: 'pm_card_visa' })).toBe('retryPayment takes paymentMethod, by and attempt, not payment_method');
  });
});

describe('the routing fields copied into an event workflow\'s input', () => {
  it('reads JSON pointers with their escapes, own properties only', () => {
    const body = { 'a/b': [{ '~x': 1 }], data: { email: 'ada@example.com' } };
    expect(readPointer(body, '/a~1b/0/~0x')).toBe(1);
    expect(readPointer(body, '/data/email')).toBe('ada@example.com');
    expect(readPointer(body, '/data/missing/deeper')).toBeUndefined();
    expect(readPointer(body, '/constructor')).toBeUndefined();
    expect(readPointer(body, '/data/__proto__')).toBeUndefined();
  });

  it('copies IDs and amounts, only whether personal fields are there, and nothing long or structured', () => {
    const body = { data: { orderId: 'ord_1', amount: 4200, currency: { code: 'eur' }, customer: 'c'.repeat(MAX_FIELD_LENGTH + 1), paymentMethod: 'pm_card_visa', email: 'ada@example.com' } };
    expect(eventFields(WorkflowType.chargeOrder, body)).toEqual({ orderId: 'ord_1', amount: 4200, paymentMethod: 'pm_card_visa', email: true });
    expect(eventFields(WorkflowType.chargeOrder, { data: { email: '' } })).toEqual({ email: false });
    expect(eventFields(WorkflowType.recordEvent, body)).toEqual({});
    expect(bodyField(WorkflowType.chargeOrder, 'email')).toEqual({ fromBody: '/data/email' });
  });
});
