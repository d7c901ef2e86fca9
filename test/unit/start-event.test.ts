import { Router } from '../../src/flows';
import type { ReceivedEvent } from '../../src/intake/port';
import { MAX_SUMMARY_BYTES, startOptions, summaryOf } from '../../src/intake/start-data';

const event = (subject: string): Omit<ReceivedEvent, 'body'> => ({
  source: 'standard',
  provider: 'standard-webhooks',
  id: 'msg_1',
  type: 'order.created',
  occurredAt: '2026-12-01T10:00:00.000Z',
  receivedAt: '2026-12-01T10:00:00.000Z',
  subject,
  payload: { data: { amount: 4200, currency: 'eur' } },
});

const summaryFor = (received: Omit<ReceivedEvent, 'body'>, router = new Router('standard-webhooks')) =>
  startOptions(received, { workflowIdPrefix: '', router }, 'delivery', 'webhooks').options.staticSummary;

describe('summaryOf', () => {
  it("reads source · type · subject, then the flow's own part (an order's amount)", () => {
    expect(summaryFor(event('ord_1'))).toBe('standard · order.created · ord_1 · 42.00 EUR');
    expect(summaryFor(event('ord_1'), new Router('standard-webhooks', { 'order.created': 'recordEvent' }))).toBe('standard · order.created · ord_1');
    const shopify = {
      ...event('gid://shopify/Order/1'),
      source: 'shopify',
      provider: 'shopify' as const,
      type: 'orders/paid',
      payload: { total_price: '4200', currency: 'jpy' },
    };
    expect(summaryFor(shopify, new Router('shopify'))).toBe('shopify · orders/paid · gid://shopify/Order/1 · 4200 JPY');
  });

  it.each([
    ['a 1,000-character subject', 'o'.repeat(1000)],
    ['a subject of multi-byte characters', 'é€😀'.repeat(100)],
  ])("cuts %s to Temporal's 200 bytes on a character boundary", (_name, subject) => {
    const summary = summaryOf(event(subject));
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
    expect(Buffer.byteLength(summary)).toBeGreaterThan(MAX_SUMMARY_BYTES - 4);
    expect(summary.endsWith('…')).toBe(true);
    expect(summary).not.toContain('\uFFFD');
    expect(`standard · order.created · ${subject}`.startsWith(summary.slice(0, -1))).toBe(true);
  });
});
