import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import type { TurnRequest } from '../../contracts';
import { EntityPage } from '../../src/http/console/pages/entity';
import type { EntityView } from '../../src/temporal/entities';

/** The console's key page for a coalescing key with a burst of a thousand events waiting. */
const waiting = (index: number): TurnRequest => ({ eventId: `evt_${index}`, workflowId: `evt_${index}`, type: 'customer.updated', version: [index] });
const view: EntityView = {
  flow: 'syncStripeCustomer',
  source: 'stripe',
  key: 'cus_1',
  order: 'coalesce',
  coalesce: { quiet: 5_000, ceiling: 60_000 },
  burst: { since: 1_000, latest: 2_000 },
  last: null,
  pending: Array.from({ length: 1_000 }, (_, index) => waiting(index)),
  running: null,
  parked: null,
  applied: 0,
  superseded: 0,
  holdsKey: false,
  carry: 1_000,
  stored: null,
  workflowId: 'durable-webhooks:entity:syncStripeCustomer:stripe:cus_1',
  open: true,
  uiUrl: 'http://ui.test',
};

it("says how a coalescing key gathers its bursts, and links the first 50 of a burst's waiting events, counting the rest", () => {
  const html = renderToStaticMarkup(createElement(EntityPage, { session: { tokenName: 'ops', role: 'viewer', tokenSha256: '', csrf: '' }, view }));
  expect(html).toContain('syncStripeCustomer · stripe (coalesce: a burst gathers until 5 s quiet, at most 60 s)');
  expect(html.match(/href="\/console\/events\/evt_\d+"/g)).toHaveLength(50);
  expect(html).toContain('evt_49</a></span> and 950 more');
});

it('counts the newer events a serial key keeps in the database after those its run carries', () => {
  const serial: EntityView = {
    ...view,
    order: 'serial',
    coalesce: null,
    burst: null,
    pending: Array.from({ length: 3 }, (_, index) => waiting(index)),
    stored: { count: 1_200, oldest: { eventId: 'evt_3', version: [3] } },
  };
  const html = renderToStaticMarkup(createElement(EntityPage, { session: { tokenName: 'ops', role: 'viewer', tokenSha256: '', csrf: '' }, view: serial }));
  expect(html).toContain('evt_2</a></span>, and 1200 more kept in the database until their turns come near');
  const none = renderToStaticMarkup(
    createElement(EntityPage, { session: { tokenName: 'ops', role: 'viewer', tokenSha256: '', csrf: '' }, view: { ...serial, pending: [] } }),
  );
  expect(none).toContain('<dd class="waiting">1200 kept in the database until their turns come near</dd>');
});
