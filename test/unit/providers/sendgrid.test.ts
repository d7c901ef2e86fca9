import { createSendGridAdapter } from '../../../src/providers/sendgrid';
import { SENDGRID_KEYS, sendgridKeyPair } from '../../support/signing';

const adapter = createSendGridAdapter({ source: 'sendgrid', publicKeys: [sendgridKeyPair().publicKey, SENDGRID_KEYS.publicKey] });
const signedAt = 1_764_583_200;
const item = (id: string, event = 'delivered') => ({ email: 'ada@example.com', timestamp: signedAt - 10, event, sg_event_id: id, sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0' });
const verify = (body: string, headers: Record<string, string>, receivedAt = new Date(signedAt * 1000)) => adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt });

describe('sendgrid adapter', () => {
  it('verifies the batch\'s ECDSA signature with @sendgrid/eventwebhook and makes one event per item, stored on its own', async () => {
    const body = JSON.stringify([item('sg-1'), item('sg-2', 'open'), item('sg-3', 'bounce')]);
    const { events, refused } = await verify(body, SENDGRID_KEYS.headers(body, signedAt));
    expect(refused).toEqual([]);
    expect(events.map(({ id, type, item: index }) => ({ id, type, index }))).toEqual([
      { id: 'sg-1', type: 'delivered', index: 0 },
      { id: 'sg-2', type: 'open', index: 1 },
      { id: 'sg-3', type: 'bounce', index: 2 },
    ]);
    expect(events[0]).toMatchObject({ subject: item('x').sg_message_id, occurredAt: new Date((signedAt - 10) * 1000).toISOString() });
    expect(JSON.parse(events[1]!.body!.raw.toString())).toEqual(item('sg-2', 'open'));
  });

  it('refuses an item without sg_event_id on its own, keeping the others', async () => {
    const body = JSON.stringify([item('sg-4'), { event: 'delivered' }, item('sg-5')]);
    const { events, refused } = await verify(body, SENDGRID_KEYS.headers(body, signedAt));
    expect(events.map((event) => event.id)).toEqual(['sg-4', 'sg-5']);
    expect(refused).toEqual([{ index: 1, reason: 'The item has no "sg_event_id".' }]);
  });

  it('refuses a tampered batch, another key, a stale timestamp and a body that is not an array', async () => {
    const body = JSON.stringify([item('sg-6')]);
    const headers = SENDGRID_KEYS.headers(body, signedAt);
    await expect(verify(body.replace('delivered', 'dropped'), headers)).rejects.toThrow(/x-twilio-email-event-webhook-signature does not match/);
    await expect(verify(body, sendgridKeyPair().headers(body, signedAt))).rejects.toThrow(/does not match/);
    await expect(verify(body, headers, new Date((signedAt + 301) * 1000))).rejects.toThrow(/outside the 300 s tolerance/);
    const object = JSON.stringify({ sg_event_id: 'x' });
    await expect(verify(object, SENDGRID_KEYS.headers(object, signedAt))).rejects.toThrow(/must be a JSON array/);
  });
});
