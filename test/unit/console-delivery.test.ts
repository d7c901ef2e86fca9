import { ProviderKind } from '../../contracts';
import { decodeDelivery } from '../../src/http/console/delivery';
import type { StoredBody } from '../../src/db/event-bodies';
import githubIssuesOpened from '../../src/providers/fixtures/github.issues.opened.json';
import twilioMessageDelivered from '../../src/providers/fixtures/twilio.message.delivered.json';
import { MASK } from '../../src/core/redact';

/**
 * What a viewer sees of a stored body on the event page: decoded as the activities read it, with
 * every value that names a person masked, whether the general rule knows its key or its kind
 * declares it; an admin's audited reveal shows it whole.
 */
const stored = (provider: ProviderKind, contentType: string, body: string): StoredBody => ({
  source: provider,
  eventId: 'evt_1',
  workflowId: 'evt_1',
  provider,
  via: 'delivery',
  contentType,
  signatureHeaders: {},
  body: Buffer.from(body),
  size: body.length,
  sha256: '0'.repeat(64),
  receivedAt: new Date('2026-12-06T00:00:00Z'),
  erasedAt: null,
  purgedAt: null,
});

it('masks the phone numbers of the Twilio sample, which its kind declares personal', () => {
  const form = new URLSearchParams({ ...twilioMessageDelivered, Body: 'Your code is 123456' }).toString();
  const shown = decodeDelivery(stored(ProviderKind.TWILIO, 'application/x-www-form-urlencoded', form), { reveal: false }).body!;
  for (const personal of [twilioMessageDelivered.From, twilioMessageDelivered.To, '123456']) expect(shown).not.toContain(personal);
  expect(JSON.parse(shown)).toMatchObject({ From: MASK, To: MASK, Body: MASK, SmsStatus: 'delivered' });
  expect(decodeDelivery(stored(ProviderKind.TWILIO, 'application/x-www-form-urlencoded', form), { reveal: true }).body).toContain(twilioMessageDelivered.From);
});

it('decodes a form-encoded GitHub payload (one JSON string under payload) and masks its logins', () => {
  const form = new URLSearchParams({ payload: JSON.stringify(githubIssuesOpened) }).toString();
  const shown = decodeDelivery(stored(ProviderKind.GITHUB, 'application/x-www-form-urlencoded', form), { reveal: false }).body!;
  expect(shown).not.toContain('octocat');
  expect(JSON.parse(shown)).toMatchObject({ action: 'opened', sender: { login: MASK, id: 1 } });
});

it("masks a client's address under browser_ip, shopperIP or anywhere in a value", () => {
  const order = {
    id: 1,
    browser_ip: '203.0.113.7',
    client_details: { browser_ip: '2001:db8::1', user_agent: 'curl' },
    note: 'placed from 198.51.100.23',
    zip: false,
  };
  const shown = decodeDelivery(stored(ProviderKind.SHOPIFY, 'application/json', JSON.stringify(order)), { reveal: false }).body!;
  expect(JSON.parse(shown)).toEqual({
    id: 1,
    browser_ip: MASK,
    client_details: { browser_ip: MASK, user_agent: 'curl' },
    note: `placed from ${MASK}`,
    zip: false,
  });
  const adyen = {
    live: 'false',
    notificationItems: [
      { NotificationRequestItem: { pspReference: '8816', eventCode: 'AUTHORISATION', additionalData: { shopperIP: '192.0.2.9', shopperCountry: 'NL' } } },
    ],
  };
  const item = JSON.parse(decodeDelivery(stored(ProviderKind.ADYEN, 'application/json', JSON.stringify(adyen)), { reveal: false }).body!) as {
    additionalData: Record<string, string>;
  };
  expect(item.additionalData).toEqual({ shopperIP: MASK, shopperCountry: 'NL' });
});
