import { createShopifyAdapter } from '../../../src/providers/shopify';
import { createSlackAdapter } from '../../../src/providers/slack';
import { createStandardWebhooksAdapter } from '../../../src/providers/standard-webhooks';
import type { ProviderAdapter } from '../../../src/providers/types';
import { CATALOG_SECRETS, SECRETS, shopifyHeaders, slackHeaders, standardHeaders, svixHeaders } from '../../support/signing';

/**
 * The libraries of these kinds verify text, not bytes. A body signed with a literal U+FFFD
 * (EF BF BD) and sent with a lone 0xFF instead decodes, leniently, to the same text: it must be
 * refused, so that only the exact bytes the provider signed are accepted.
 */
const receivedAt = new Date();
const seconds = Math.floor(receivedAt.getTime() / 1000);
const signedText = JSON.stringify({ type: 'app_mention', event_id: 'Ev1', event: { type: 'app_mention', text: 'caf\uFFFD' }, id: 'evt_1' });
const swapped = Buffer.concat([
  Buffer.from(signedText.slice(0, signedText.indexOf('\uFFFD'))),
  Buffer.from([0xff]),
  Buffer.from(signedText.slice(signedText.indexOf('\uFFFD') + 1)),
]);

const kinds: Array<{ kind: string; adapter: ProviderAdapter; headers: Record<string, string> }> = [
  {
    kind: 'slack',
    adapter: createSlackAdapter({ source: 'slack', secrets: [CATALOG_SECRETS.slack] }),
    headers: slackHeaders(signedText, CATALOG_SECRETS.slack, seconds),
  },
  {
    kind: 'shopify',
    adapter: createShopifyAdapter({ source: 'shopify', secrets: [CATALOG_SECRETS.shopify] }),
    headers: shopifyHeaders(signedText, CATALOG_SECRETS.shopify, { eventId: 'e1' }),
  },
  {
    kind: 'standard-webhooks',
    adapter: createStandardWebhooksAdapter({ source: 'standard', secrets: [SECRETS.standard], publicKeys: [] }),
    headers: standardHeaders(signedText, SECRETS.standard, { id: 'msg_1', timestamp: receivedAt }),
  },
  {
    kind: 'svix',
    adapter: createStandardWebhooksAdapter({ source: 'svix', secrets: [CATALOG_SECRETS.svix], publicKeys: [], flavour: 'svix' }),
    headers: svixHeaders(signedText, CATALOG_SECRETS.svix, { id: 'msg_1', timestamp: receivedAt }),
  },
];

describe.each(kinds)('$kind verifies the bytes received', ({ adapter, headers }) => {
  it('accepts the signed bytes', async () => {
    expect((await adapter.verify({ rawBody: Buffer.from(signedText), headers, receivedAt })).events).toHaveLength(1);
  });

  it('refuses other bytes that decode to the same text, before verifying', async () => {
    expect(Buffer.from(swapped.toString('utf8'))).toEqual(Buffer.from(signedText));
    await expect(adapter.verify({ rawBody: swapped, headers, receivedAt })).rejects.toThrow('The body is not valid UTF-8.');
  });
});
