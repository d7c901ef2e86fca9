import { MAX_SUMMARY_BYTES, summaryOf, type ReceivedEvent } from '../../src/temporal/start-event';

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

describe('summaryOf', () => {
  it('reads source · type · subject · amount', () => {
    expect(summaryOf(event('ord_1'))).toBe('standard · order.created · ord_1 · 42.00 EUR');
  });

  it.each([
    ['a 1,000-character subject', 'o'.repeat(1000)],
    ['a subject of multi-byte characters', 'é€😀'.repeat(100)],
  ])('cuts %s to Temporal\'s 200 bytes on a character boundary', (_name, subject) => {
    const summary = summaryOf(event(subject));
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
    expect(Buffer.byteLength(summary)).toBeGreaterThan(MAX_SUMMARY_BYTES - 4);
    expect(summary.endsWith('…')).toBe(true);
    expect(summary).not.toContain('\uFFFD');
    expect(`standard · order.created · ${subject}`.startsWith(summary.slice(0, -1))).toBe(true);
  });
});
