import { createSlackAdapter } from '../../../src/providers/slack';
import { CATALOG_SECRETS, slackHeaders } from '../../support/signing';

const adapter = createSlackAdapter({ source: 'slack', secrets: [CATALOG_SECRETS.slack, CATALOG_SECRETS.slackRotated] });
const signedAt = 1_764_583_200;
const receivedAt = new Date(signedAt * 1000 + 1500);
const body = JSON.stringify({
  token: 'XXYYZZ',
  team_id: 'T123ABC456',
  api_app_id: 'A123ABC456',
  event: { type: 'app_mention', user: 'U061F7AUR', text: '<@U0LAN0Z89> hello', ts: '1515449522.000016', channel: 'C123ABC456', event_ts: '1515449522000016' },
  type: 'event_callback',
  event_id: 'Ev08MFMKH6',
  event_time: signedAt - 1,
});
const verify = (payload: string, headers: Record<string, string>, at = receivedAt) =>
  adapter.verify({ rawBody: Buffer.from(payload), headers, receivedAt: at });

describe('slack adapter', () => {
  it("verifies with @slack/bolt at the receiver's clock, reading event_id and the inner event type", async () => {
    const { events } = await verify(body, slackHeaders(body, CATALOG_SECRETS.slack, signedAt));
    expect(events).toEqual([
      expect.objectContaining({ id: 'Ev08MFMKH6', type: 'app_mention', subject: 'C123ABC456', occurredAt: new Date((signedAt - 1) * 1000).toISOString() }),
    ]);
    expect((await verify(body, slackHeaders(body, CATALOG_SECRETS.slackRotated, signedAt))).events[0]!.id).toBe('Ev08MFMKH6');
  });

  it('answers url_verification with its challenge and no event', async () => {
    const challenge = JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    expect(await verify(challenge, slackHeaders(challenge, CATALOG_SECRETS.slack, signedAt))).toEqual({
      events: [],
      challenge: { contentType: 'application/json', body: JSON.stringify({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' }) },
    });
  });

  it('refuses a request older than 5 minutes or as far in the future, a tampered body, another secret and an unsigned challenge', async () => {
    const headers = slackHeaders(body, CATALOG_SECRETS.slack, signedAt);
    await expect(verify(body, headers, new Date((signedAt + 301) * 1000))).rejects.toThrow(/X-Slack-Request-Timestamp is outside the 300 s tolerance/);
    await expect(verify(body, headers, new Date((signedAt - 301) * 1000))).rejects.toThrow(/X-Slack-Request-Timestamp is outside the 300 s tolerance/);
    await expect(verify(body.replace('hello', 'bye'), headers)).rejects.toThrow(/X-Slack-Signature does not match/);
    await expect(verify(body, slackHeaders(body, 'another-secret', signedAt))).rejects.toThrow(/does not match/);
    const challenge = JSON.stringify({ challenge: 'x', type: 'url_verification' });
    await expect(verify(challenge, { 'content-type': 'application/json' })).rejects.toThrow(/x-slack-signature header is missing/);
  });
});
