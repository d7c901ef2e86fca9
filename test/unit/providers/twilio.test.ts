import { createTwilioAdapter } from '../../../src/providers/twilio';
import { CATALOG_SECRETS, twilioRequest } from '../../support/signing';

const url = CATALOG_SECRETS.twilioUrl;
const adapter = createTwilioAdapter({ source: 'twilio', secrets: [CATALOG_SECRETS.twilio, CATALOG_SECRETS.twilioRotated], url });
const callback = {
  AccountSid: 'AC00000000000000000000000000000000',
  MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
  MessageStatus: 'delivered',
  To: '+15558675310',
  From: '+15017122661',
};
const verify = async ({ body, headers }: { body: string; headers: Record<string, string> }) =>
  (await adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt: new Date('2026-12-01T10:00:00Z') })).events[0]!;

describe('twilio adapter', () => {
  it('verifies the configured URL (query included) and the form with the twilio package, keyed by I-Twilio-Idempotency-Token', async () => {
    expect(await verify(twilioRequest(callback, CATALOG_SECRETS.twilio, url, 'idem-1'))).toMatchObject({
      id: 'idem-1',
      type: 'message.delivered',
      subject: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
      payload: callback,
    });
    expect((await verify(twilioRequest(callback, CATALOG_SECRETS.twilioRotated, url, 'idem-2'))).id).toBe('idem-2');
  });

  it('falls back to the resource SID and its status without an idempotency token', async () => {
    expect((await verify(twilioRequest(callback, CATALOG_SECRETS.twilio, url))).id).toBe('SM1f0e8ae6ade43cb3c0ce4525424e404f:delivered');
    const call = { AccountSid: 'AC0', CallSid: 'CA9', CallStatus: 'completed' };
    expect(await verify(twilioRequest(call, CATALOG_SECRETS.twilio, url))).toMatchObject({ id: 'CA9:completed', type: 'call.completed' });
  });

  it('refuses another URL, a changed parameter, another token, and a signed request that identifies nothing', async () => {
    await expect(verify(twilioRequest(callback, CATALOG_SECRETS.twilio, 'https://hooks.example.com/webhooks/twilio', 'idem-3'))).rejects.toThrow(
      /X-Twilio-Signature does not match/,
    );
    const signed = twilioRequest(callback, CATALOG_SECRETS.twilio, url, 'idem-3');
    await expect(verify({ ...signed, body: signed.body.replace('delivered', 'failed') })).rejects.toThrow(/does not match/);
    await expect(verify(twilioRequest(callback, 'other-token', url, 'idem-3'))).rejects.toThrow(/does not match/);
    await expect(verify(twilioRequest({ AccountSid: 'AC0' }, CATALOG_SECRETS.twilio, url))).rejects.toThrow(
      /no I-Twilio-Idempotency-Token header and no resource SID/,
    );
  });
});
