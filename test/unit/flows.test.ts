import type { Duration } from '@temporalio/common';
import { defineFlow, ProviderKind, type EntityDeclaration } from '../../contracts';
import { applySubscriptionEventFlow, chargeOrderFlow, fulfilCheckoutFlow, notifyGitHubFlow, recordEventFlow, routeEventFlow } from '../../workflows';
import { ConfigError } from '../../src/core/errors';
import { listFlows } from '../../src/cli/flows';
import { checkedKeys, checkedWaits, FLOWS, Router } from '../../src/flows';
import { waitKey, waitKeysOf } from '../../src/intake/waits';

describe("a source's routes", () => {
  it("use the kind's defaults, and record every other type", () => {
    const stripe = new Router(ProviderKind.STRIPE);
    expect(stripe.flowFor('checkout.session.completed')).toBe(fulfilCheckoutFlow);
    expect(stripe.flowFor('customer.subscription.updated')).toBe(applySubscriptionEventFlow);
    expect(stripe.flowFor('invoice.paid')).toBe(recordEventFlow);
    expect(stripe.flowFor('constructor')).toBe(recordEventFlow);
    expect(new Router(ProviderKind.PADDLE).flowFor('transaction.completed')).toBe(recordEventFlow);
  });

  it('come before the defaults: an exact type, then the longest prefix', () => {
    const router = new Router(ProviderKind.STRIPE, {
      'invoice.paid': 'notifyGitHub',
      'customer.*': 'recordEvent',
      'customer.subscription.*': 'applySubscriptionEvent',
      'checkout.session.completed': 'recordEvent',
    });
    expect(router.flowFor('invoice.paid')).toBe(notifyGitHubFlow);
    expect(router.flowFor('customer.created')).toBe(recordEventFlow);
    expect(router.flowFor('customer.subscription.paused')).toBe(applySubscriptionEventFlow);
    expect(router.flowFor('checkout.session.completed')).toBe(recordEventFlow);
    expect(router.flowFor('charge.refunded')).toBe(recordEventFlow);
    expect(new Router(ProviderKind.SHOPIFY, { '*': 'chargeOrder' }).flowFor('orders/create')).toBe(chargeOrderFlow);
  });

  it('say what each flow gets at the source', () => {
    const router = new Router(ProviderKind.STRIPE, { 'invoice.paid': 'fulfilCheckout', 'customer.subscription.deleted': 'recordEvent' });
    expect(router.routedTo(fulfilCheckoutFlow)).toEqual(['checkout.session.completed', 'invoice.paid']);
    expect(router.routedTo(applySubscriptionEventFlow)).toEqual(['customer.subscription.created', 'customer.subscription.updated']);
    expect(router.routedTo(recordEventFlow)).toEqual(['customer.subscription.deleted', '* (everything else)']);
    expect(router.routedTo(chargeOrderFlow)).toEqual([]);
  });

  it('may ignore a type or a prefix: nothing starts for it, and no flow is said to get it', () => {
    const router = new Router(ProviderKind.STRIPE, { 'invoice.*': 'ignore', 'checkout.session.completed': 'ignore', 'invoice.paid': 'notifyGitHub' });
    expect(['invoice.finalized', 'checkout.session.completed', 'invoice.paid', 'charge.refunded'].map((type) => router.ignores(type))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(router.routedTo(fulfilCheckoutFlow)).toEqual([]);
    expect(router.ignored()).toEqual(['invoice.*', 'checkout.session.completed']);
  });

  it.each([
    [
      'an unknown flow',
      { 'invoice.paid': 'notifyFinance' },
      'routes: "invoice.paid" names the flow "notifyFinance", which does not exist; use one of chargeOrder, fulfilCheckout, fulfilShopifyOrder, notifyGitHub, recordCheckoutRefund, recordEvent, applySubscriptionEvent, syncStripeCustomer, refreshStripeCustomer, or ignore.',
    ],
    ['an internal workflow', { 'invoice.paid': 'subscriptionEntity' }, /"invoice.paid" names the flow "subscriptionEntity", which does not exist/],
    [
      'a star inside the type',
      { 'customer.*.created': 'recordEvent' },
      'routes: "customer.*.created" must be an event type, or a prefix ending in "*" such as "customer.*".',
    ],
    ['an empty type', { '': 'recordEvent' }, /"" must be an event type/],
  ])('refuse %s', (_what, routes, message) => {
    expect(() => new Router(ProviderKind.STRIPE, routes)).toThrow(ConfigError);
    expect(() => new Router(ProviderKind.STRIPE, routes)).toThrow(message);
  });
});

describe('a route with subscribers', () => {
  const stripe = (type: string) => ({ type, source: 'stripe', provider: ProviderKind.STRIPE });
  const router = new Router(ProviderKind.STRIPE, {
    'checkout.session.completed': [
      'fulfilCheckout',
      { flow: 'notifyGitHub', if: 'body.data.object.amount_total >= 100000' },
      { flow: 'recordEvent', if: 'body.data.object.currency == "eur"' },
    ],
    'invoice.*': { flow: 'notifyGitHub', if: 'body.data.object.paid' },
  });

  it('runs each flow whose filter holds, and starts the event as routeEvent', () => {
    const session = (amount: number, currency: string) => ({ data: { object: { amount_total: amount, currency } } });
    expect(router.decide(stripe('checkout.session.completed'), session(4200, 'eur'))).toEqual({
      subscribers: [fulfilCheckoutFlow, recordEventFlow],
      filtered: ['notifyGitHub'],
      failures: [],
    });
    expect(router.decide(stripe('checkout.session.completed'), session(250_000, 'usd'))).toEqual({
      subscribers: [fulfilCheckoutFlow, notifyGitHubFlow],
      filtered: ['recordEvent'],
      failures: [],
    });
    expect(router.flowFor('checkout.session.completed')).toBe(routeEventFlow);
    expect(router.decide(stripe('charge.refunded'), {})).toEqual({ flow: recordEventFlow });
  });

  it('takes an event for no flow when no filter holds: filtered', () => {
    expect(router.decide(stripe('invoice.paid'), { data: { object: { paid: false } } })).toEqual({
      subscribers: [],
      filtered: ['notifyGitHub'],
      failures: [],
    });
  });

  it("records a filter that cannot decide for one event as that flow's failure, and runs the others", () => {
    const decision = router.decide(stripe('checkout.session.completed'), { data: { object: { amount_total: '42' } } });
    expect(decision).toEqual({
      subscribers: [fulfilCheckoutFlow],
      filtered: [],
      failures: [
        { flow: 'notifyGitHub', error: expect.stringContaining('the filter "body.data.object.amount_total >= 100000"') },
        { flow: 'recordEvent', error: expect.stringMatching(/^the filter "body.data.object.currency == \\"eur\\"" .*currency/) },
      ],
    });
  });

  it('says what each flow gets, with its filter', () => {
    expect(router.routedTo(notifyGitHubFlow)).toEqual([
      'checkout.session.completed if body.data.object.amount_total >= 100000',
      'invoice.* if body.data.object.paid',
    ]);
    expect(router.routedTo(fulfilCheckoutFlow)).toEqual(['checkout.session.completed (with others)']);
  });

  it("filters on the subscriber's own tenant, read from the signed body; null where its flow names none", () => {
    const byTenant = new Router(ProviderKind.STRIPE, {
      'checkout.session.completed': [
        { flow: 'fulfilCheckout', if: 'event.tenant == "acct_big"' },
        { flow: 'recordEvent', if: 'event.tenant == null' },
      ],
    });
    expect(byTenant.decide(stripe('checkout.session.completed'), { account: 'acct_big', data: { object: {} } })).toEqual({
      subscribers: [fulfilCheckoutFlow, recordEventFlow],
      filtered: [],
      failures: [],
    });
    expect(byTenant.decide(stripe('checkout.session.completed'), { account: 'acct_small', data: { object: {} } })).toMatchObject({
      subscribers: [recordEventFlow],
      filtered: ['fulfilCheckout'],
    });
  });

  it('decides from the body only when every filter reads the body alone', () => {
    // The source, its kind and a tenant are vouched for by the URL, the secret and the signed body; the type may be an unsigned header.
    expect(
      new Router(ProviderKind.SHOPIFY, {
        'orders/paid': ['fulfilShopifyOrder', { flow: 'recordEvent', if: 'event.source == "shopify" && event.provider == "shopify" && event.tenant == null' }],
      }).decidesFromBody,
    ).toBe(true);
    expect(
      new Router(ProviderKind.SHOPIFY, { 'orders/paid': ['fulfilShopifyOrder', { flow: 'recordEvent', if: 'body.total_price != "0.00"' }] }).decidesFromBody,
    ).toBe(true);
    expect(
      new Router(ProviderKind.SHOPIFY, { 'orders/paid': ['fulfilShopifyOrder', { flow: 'recordEvent', if: 'event.type == "orders/paid"' }] }).decidesFromBody,
    ).toBe(false);
  });

  it.each([
    [
      'a filter that is no CEL',
      { flow: 'recordEvent', if: 'body.amount >' },
      'routes: "invoice.paid" → recordEvent: the filter is not a CEL expression over body and event: ',
    ],
    [
      'a filter over an unknown name',
      { flow: 'recordEvent', if: 'amount > 1' },
      /the filter is not a CEL expression over body and event: Unknown variable: amount/,
    ],
    ['a filter that yields no bool', { flow: 'recordEvent', if: '1 + 2' }, /the filter yields int, not a bool/],
    ['a filter over its size bound', { flow: 'recordEvent', if: `body.a == "${'x'.repeat(1000)}"` }, /characters long; a filter has at most 1000/],
    ['a filter over its node bound', { flow: 'recordEvent', if: Array.from({ length: 80 }, () => '1==1').join('||') }, /not a CEL expression.*(AST|node)/i],
    ['a comprehension inside another', { flow: 'recordEvent', if: 'body.items.exists(i, body.items.all(j, i == j))' }, /a comprehension .* inside another/],
    ['a regular expression', { flow: 'recordEvent', if: 'body.email.matches("(a+)+$")' }, /calls matches\(\)/],
    ['a flow named twice', ['recordEvent', { flow: 'recordEvent', if: 'true' }], /names recordEvent twice/],
    ['an empty list', [], /lists no flow/],
    ['an internal subscriber', ['routeEvent'], /names the flow "routeEvent", which does not exist/],
  ])('refuses %s when the configuration loads', (_what, value, message) => {
    expect(() => new Router(ProviderKind.STRIPE, { 'invoice.paid': value })).toThrow(ConfigError);
    expect(() => new Router(ProviderKind.STRIPE, { 'invoice.paid': value })).toThrow(message);
  });
});

describe('durable-webhooks flows', () => {
  it('lists each flow with what every source routes to it, its signals, fields and queries', () => {
    const listing = listFlows([
      { name: 'stripe', router: new Router(ProviderKind.STRIPE) },
      { name: 'billing', router: new Router(ProviderKind.STRIPE, { 'invoice.payment_failed': 'chargeOrder' }) },
    ]);
    expect(listing.find((flow) => flow.name === 'chargeOrder')).toEqual({
      name: 'chargeOrder',
      description: expect.stringContaining('charges the card through Stripe'),
      internal: false,
      events: { billing: ['invoice.payment_failed'] },
      unsignedTypes: {},
      decidesFromBody: false,
      replaysByType: [],
      signals: [
        { name: 'approve', description: 'approves an order held for review', onlyWhileAwaited: false },
        { name: 'reject', description: 'rejects an order held for review; it is cancelled', onlyWhileAwaited: false },
        { name: 'retryPayment', description: expect.any(String), onlyWhileAwaited: true },
      ],
      fields: { copy: ['orderId', 'amount', 'currency', 'customer', 'paymentMethod'], personal: ['email'] },
      tenant: null,
      queries: ['status'],
      versioning: { behavior: 'AUTO_UPGRADE', why: expect.stringContaining('retryPayment') },
      key: null,
      waits: [],
    });
    // A flow that waits for another event says for what, by which match, and for how long.
    expect(listing.find((flow) => flow.name === 'recordCheckoutRefund')).toMatchObject({
      events: {},
      waits: [
        {
          name: 'refund',
          type: 'charge.refunded',
          match: 'body.data.object.payment_intent == waiting.paymentIntent && body.data.object.amount_refunded > 0',
          timeout: '30 days',
        },
      ],
    });
    // A keyed flow says its key, version and order; its key's copied fields are its own business.
    expect(listing.find((flow) => flow.name === 'fulfilShopifyOrder')).toMatchObject({
      key: { key: '/id', version: ['/updated_at'], order: 'latest' },
      fields: { copy: ['orderId', 'orderName', 'amount', 'currency', 'financialStatus'], personal: ['email'] },
    });
    expect(listing.find((flow) => flow.name === 'syncStripeCustomer')).toMatchObject({
      key: { key: '/data/object/id', version: ['/created', '/id'], order: 'coalesce', quiet: '5s', ceiling: '1m' },
    });
    expect(listing.find((flow) => flow.name === 'fulfilCheckout')).toMatchObject({
      events: { stripe: ['checkout.session.completed'], billing: ['checkout.session.completed'] },
      tenant: '/account',
    });
    expect(listing.find((flow) => flow.name === 'subscriptionEntity')).toMatchObject({
      internal: true,
      events: {},
      signals: [{ name: 'apply' }],
      queries: ['state'],
    });
  });

  it("says where a flow is picked by a type the provider does not sign (Shopify's X-Shopify-Topic)", () => {
    const listing = listFlows([
      { name: 'stripe', router: new Router(ProviderKind.STRIPE) },
      { name: 'shopify', router: new Router(ProviderKind.SHOPIFY), unsignedType: 'X-Shopify-Topic header' },
    ]);
    expect(listing.find((flow) => flow.name === 'fulfilShopifyOrder')).toMatchObject({
      events: { shopify: ['orders/create', 'orders/updated', 'orders/paid'] },
      unsignedTypes: { shopify: 'X-Shopify-Topic header' },
      decidesFromBody: true,
      replaysByType: ['shopify'],
    });
    expect(listing.find((flow) => flow.name === 'fulfilCheckout')).toMatchObject({ unsignedTypes: {}, decidesFromBody: false });
  });

  it('keeps a source on the strict replay guard when one of its flows is chosen by the type alone', () => {
    expect(new Router(ProviderKind.SHOPIFY).decidesFromBody).toBe(true);
    expect(new Router(ProviderKind.SHOPIFY, { 'orders/cancelled': 'notifyGitHub' }).decidesFromBody).toBe(false);
    expect(new Router(ProviderKind.SHOPIFY, { 'orders/cancelled': 'ignore' }).decidesFromBody).toBe(true);
    expect(new Router(ProviderKind.GITHUB).decidesFromBody).toBe(false);
  });
});

describe('a coalescing key', () => {
  const keyed = (key: EntityDeclaration) =>
    defineFlow({
      workflow: async function keyedExample() {},
      description: 'an example',
      versioning: { behavior: 'AUTO_UPGRADE', why: 'an example' },
      key,
    });
  const coalescing = (quiet: string, ceiling: string) =>
    keyed({ key: '/id', version: ['/updated_at'], order: 'coalesce', quiet, ceiling } as EntityDeclaration);

  it('is read when the flows load: times that are no durations, or a quiet time longer than the ceiling, stop the process that loads them', () => {
    expect(checkedKeys(FLOWS)).toBe(FLOWS);
    expect(checkedKeys([coalescing('5s', '1m'), keyed({ key: '/id', version: [], order: 'serial' })])).toHaveLength(2);
    expect(() => checkedKeys([coalescing('soon', '1m')])).toThrow(
      `keyedExample: A coalescing key needs a quiet time and a ceiling no shorter than it ('5s', '1m'), not "soon" and "1m".`,
    );
    expect(() => checkedKeys([coalescing('2m', '1m')])).toThrow('not "2m" and "1m"');
    expect(() => checkedKeys([coalescing('0s', '1m')])).toThrow('not "0s" and "1m"');
  });
});

describe("a flow's wait for another event", () => {
  const waiting = (match: string, timeout = '30 days') =>
    defineFlow({
      workflow: async function waitingExample() {},
      description: 'an example',
      versioning: { behavior: 'AUTO_UPGRADE', why: 'an example' },
      waits: { refund: { type: 'charge.refunded', match, timeout: timeout as Duration } },
    });

  it('is read when the flows load: a match that compares no body field to a waiting value, or a timeout that is no duration, stops the process', () => {
    expect(checkedWaits(FLOWS)).toBe(FLOWS);
    expect(checkedWaits([waiting('waiting.paymentIntent == body.data.object.payment_intent && body.livemode')])).toHaveLength(1);
    expect(() => checkedWaits([waiting('body.data.object.amount_refunded > 0')])).toThrow(
      "waitingExample: the wait refund's match compares no body field to a waiting value at its top level; write body.<field> == waiting.<name> (then && anything else), the field stored events are found by.",
    );
    expect(() => checkedWaits([waiting('body.a == waiting.a || body.b == waiting.b')])).toThrow('compares no body field to a waiting value');
    expect(() => checkedWaits([waiting('body.a == waiting.a && body.b.matches("x+")')])).toThrow('calls matches()');
    expect(() => checkedWaits([waiting('body.a == waiting.a && customer.id == "x"')])).toThrow('is not a CEL expression over body, event and waiting');
    expect(() => checkedWaits([waiting('body.a == waiting.a', 'a month')])).toThrow(`waitingExample: the wait refund's timeout "a month" is no duration`);
  });

  it("indexes each stored event of an awaited type by the field its waits compare, and nothing else's", () => {
    const refund = { data: { object: { payment_intent: 'pi_1', amount_refunded: 4200 } } };
    expect(waitKeysOf('charge.refunded', refund)).toEqual(['/data/object/payment_intent="pi_1"']);
    expect(waitKeysOf('charge.refunded', { data: { object: { payment_intent: { id: 'pi_1' } } } })).toBeUndefined();
    expect(waitKeysOf('charge.succeeded', refund)).toBeUndefined();
    expect(waitKey('/a~1b', 42)).toBe('/a~1b=42');
  });
});
