import { EventWebhook } from '@sendgrid/eventwebhook';
import { createSendGridAdapter } from '../../../src/providers/sendgrid';
import { SENDGRID_KEYS, sendgridKeyPair } from '../../support/signing';

const adapter = createSendGridAdapter({ source: 'sendgrid', publicKeys: [sendgridKeyPair().publicKey, SENDGRID_KEYS.publicKey] });
const signedAt = 1_764_583_200;
const item = (id: string, event = 'delivered') => ({
  email: 'ada@example.com',
  timestamp: signedAt - 10,
  event,
  sg_event_id: id,
  sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
});
const verify = (body: string, headers: Record<string, string>, receivedAt = new Date(signedAt * 1000)) =>
  adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt });

describe('sendgrid adapter', () => {
  it("verifies the batch's ECDSA signature and makes one event per item, stored on its own", async () => {
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

  // SendGrid's own examples, from @sendgrid/eventwebhook's test suite (src/eventwebhook.spec.js):
  // our node:crypto verification answers as the library does on each, and on each altered.
  it("gives @sendgrid/eventwebhook's verdict on SendGrid's documented examples, and on them altered", async () => {
    const examples = [
      {
        publicKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==',
        signature: 'MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=',
        timestamp: '1600112502',
        body:
          JSON.stringify([
            {
              email: 'hello@world.com',
              event: 'dropped',
              reason: 'Bounced Address',
              sg_event_id: 'ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA',
              sg_message_id: 'LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0',
              'smtp-id': '<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>',
              timestamp: 1600112492,
            },
          ]) + '\r\n',
      },
      {
        publicKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQ4LIFtWztlsF7skFqOncjD1lun4H5w8XOhyOArHW9RcIx/FfEzx6cikC/yPfUvwaX/JScE7Fc9CJD2afQ9Ok3Q==',
        signature: 'MEYCIQC/I4o6vCgqRYrTljjoVWB/GRWNtxeePlLMHr3x9ETeRQIhAIpV+03nREPTTHWSW0wIOA0EoMPdcNgXa70yCaqDJlu5',
        timestamp: '1619651159',
        body:
          JSON.stringify([
            {
              email: 'invalid@gmail.com',
              event: 'processed',
              send_at: 0,
              sg_event_id: 'cHJvY2Vzc2VkLTE5OTQyMTEyLXFOd0JMZ1BRUWpXNkRKdktRd1NBYnctMA',
              sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
              'smtp-id': '<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>',
              timestamp: 1619651146,
            },
            {
              email: 'invalid@gmail.com',
              event: 'bounce',
              ip: '167.89.101.76',
              reason:
                '552 5.2.2 The email account that you tried to reach is over quota and inactive. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm c17si1130468pgv.34 - gsmtp',
              sg_event_id: 'Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w',
              sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
              'smtp-id': '<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>',
              status: '5.2.2',
              timestamp: 1619651147,
              tls: 1,
              type: 'blocked',
            },
          ])
            .split('},{')
            .join('},\r\n{') + '\r\n',
      },
    ];
    const library = new EventWebhook();
    const verdicts: Array<{ ours: boolean; library: boolean }> = [];
    for (const example of examples) {
      const ours = createSendGridAdapter({ source: 'sendgrid', publicKeys: [example.publicKey] });
      for (const [body, timestamp, signature] of [
        [example.body, example.timestamp, example.signature],
        [example.body.replace('invalid@', 'valid@').replace('hello@', 'hola@'), example.timestamp, example.signature],
        [example.body, String(Number(example.timestamp) + 1), example.signature],
        [example.body.trimEnd(), example.timestamp, example.signature],
        [example.body, example.timestamp, examples.find((other) => other !== example)!.signature],
      ] as const) {
        const headers = { 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp };
        const accepted = await ours.verify({ rawBody: Buffer.from(body), headers, receivedAt: new Date(Number(timestamp) * 1000) }).then(
          () => true,
          () => false,
        );
        verdicts.push({ ours: accepted, library: library.verifySignature(library.convertPublicKeyToECDSA(example.publicKey), body, signature, timestamp) });
      }
    }
    expect(verdicts.filter((verdict) => verdict.library)).toHaveLength(2);
    expect(verdicts.map((verdict) => verdict.ours)).toEqual(verdicts.map((verdict) => verdict.library));
  });

  it('refuses a verification key that is not a base64 P-256 public key', () => {
    expect(() => createSendGridAdapter({ source: 'sendgrid', publicKeys: ['not a key'] })).toThrow(/base64 P-256 public key/);
  });
});
