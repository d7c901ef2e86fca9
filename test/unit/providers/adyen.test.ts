import { createAdyenAdapter } from '../../../src/providers/adyen';
import { MalformedEventError, SignatureVerificationError } from '../../../src/core/delivery-errors';
import { adyenBody, adyenItem, CATALOG_SECRETS } from '../../support/signing';

const adapter = createAdyenAdapter({ source: 'adyen', secrets: [CATALOG_SECRETS.adyen, CATALOG_SECRETS.adyenRotated] });
const verify = (body: string) => adapter.verify({ rawBody: Buffer.from(body), headers: {}, receivedAt: new Date('2026-12-01T10:00:00Z') });

describe('adyen adapter', () => {
  it("verifies each item with @adyen/api-library's hmacValidator, identified by pspReference, eventCode and success", async () => {
    const first = adyenItem(CATALOG_SECRETS.adyen, { pspReference: '8816178914079738' });
    const second = adyenItem(CATALOG_SECRETS.adyenRotated, { pspReference: '8816178914079738', eventCode: 'CAPTURE' });
    const { events, refused } = await verify(adyenBody([first, second]));
    expect(refused).toEqual([]);
    expect(events.map(({ id, type, subject }) => ({ id, type, subject }))).toEqual([
      { id: '8816178914079738:AUTHORISATION:true', type: 'AUTHORISATION', subject: '8816178914079738' },
      { id: '8816178914079738:CAPTURE:true', type: 'CAPTURE', subject: '8816178914079738' },
    ]);
    expect(events[0]!.occurredAt).toBe('2026-12-01T09:00:00.000Z');
    // Each item is stored as a one-item delivery, which verifies again on its own.
    const again = await verify(events[1]!.body!.raw.toString());
    expect(again.events.map((event) => event.id)).toEqual(['8816178914079738:CAPTURE:true']);
  });

  it('refuses an item signed with another key or changed after signing, and records the others', async () => {
    const good = adyenItem(CATALOG_SECRETS.adyen);
    const forged = adyenItem('00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF');
    const changed = { ...adyenItem(CATALOG_SECRETS.adyen), amount: { currency: 'EUR', value: 1 } };
    const { events, refused } = await verify(adyenBody([forged, good, changed]));
    expect(events.map((event) => event.id)).toEqual([`${good.pspReference}:AUTHORISATION:true`]);
    expect(refused).toEqual([
      { index: 0, reason: "The item's hmacSignature does not match it with any configured HMAC key." },
      { index: 2, reason: "The item's hmacSignature does not match it with any configured HMAC key." },
    ]);
  });

  it('answers [accepted], and refuses a body without notificationItems as malformed', async () => {
    expect(adapter.acknowledgement).toEqual({ contentType: 'text/plain', body: '[accepted]' });
    await expect(verify(JSON.stringify({ live: 'false' }))).rejects.toThrow(MalformedEventError);
  });

  it('refuses a batch in which no item is signed as a whole, listing none of them', async () => {
    const forged = adyenItem('00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF');
    await expect(verify(adyenBody([forged, forged]))).rejects.toThrow(
      new SignatureVerificationError('No item of the 2 in the batch is signed with a configured HMAC key.', { source: 'adyen' }),
    );
    await expect(verify(JSON.stringify({ notificationItems: [0, 0, 0] }))).rejects.toThrow(SignatureVerificationError);
  });

  // The library decodes the key as hex and drops what is not: each of these became an empty key,
  // with which anyone can sign an item.
  it.each([
    '0x44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
    '"44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"',
    'correct horse battery staple',
    '44782DEF',
  ])('refuses to start with an HMAC key that is not 64 hexadecimal characters: %s', (key) => {
    expect(() => createAdyenAdapter({ source: 'adyen', secrets: [key] })).toThrow(/64 hexadecimal characters/);
  });
});
