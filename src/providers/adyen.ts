import { randomBytes } from 'node:crypto';
import HmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/models';
import { ConfigError, MalformedEventError, SignatureVerificationError } from '../errors';
import { batchItems } from './limits';
import { isoTime, parseJsonObject } from './json';
import { firstSecret } from './secrets';
import { ProviderKind } from '../../contracts';
import type { Delivery, ProviderAdapter, RefusedItem, SampleEvent, VerifiedEvent } from './types';
import adyenAuthorisation from './fixtures/adyen.AUTHORISATION.json';
import { defineProvider } from './define';

/**
 * Adyen's standard webhooks: a JSON body of `notificationItems`, each signed on its own
 * (`additionalData.hmacSignature`, HMAC-SHA256 with the hex HMAC key over the item's fields),
 * checked by `@adyen/api-library`'s `hmacValidator` with each configured key. Each item is its own
 * event, identified as Adyen documents duplicates: `pspReference`, `eventCode` and `success`
 * (`8816…:AUTHORISATION:true`); its type is `eventCode`. An item whose signature fails is refused
 * on its own and the others are recorded. Adyen expects `[accepted]` and retries an unanswered
 * delivery for up to 30 days. The body store keeps each item as a one-item delivery, which
 * verifies again on its own. Adyen's HMAC covers only the item's references, merchant account,
 * amount, event code and success; its other fields (eventDate, reason, additionalData) arrive
 * unsigned, so flows should read amounts and references, not those.
 * https://docs.adyen.com/development-resources/webhooks/verify-hmac-signatures
 */
export function createAdyenAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  // The library decodes the key as hex and drops what is not hex: "0x…", a quoted value or a
  // passphrase would become an empty key, which anyone can sign with.
  const invalid = secrets.find((key) => !HMAC_KEY.test(key));
  if (invalid !== undefined) throw new ConfigError(`Source "${source}": an Adyen HMAC key is the 64 hexadecimal characters Adyen's Customer Area shows.`);
  const validator = new HmacValidator();
  return {
    kind: ProviderKind.ADYEN,
    fields: { id: '"pspReference", "eventCode" and "success" of each item', type: '"eventCode" of each item' },
    contentTypes: ['application/json'],
    batch: true,
    // The signatures are in the body, one per item.
    signatureHeaders: [],
    acknowledgement: { contentType: 'text/plain', body: '[accepted]' },

    async verify({ rawBody, receivedAt }: Delivery) {
      const body = parseJsonObject(rawBody.toString('utf8'), source);
      if (!Array.isArray(body.notificationItems)) throw new MalformedEventError('The body has no "notificationItems" list.', source);
      const events: VerifiedEvent[] = [];
      const refused: RefusedItem[] = [];
      const items = batchItems(body.notificationItems, source);
      // A batch in which no item even carries a signature is refused whole, before any per-item work.
      if (!items.some((entry) => typeof (entry as { NotificationRequestItem?: { additionalData?: { hmacSignature?: unknown } } } | null)?.NotificationRequestItem?.additionalData?.hmacSignature === 'string')) {
        throw new SignatureVerificationError(`No item of the ${items.length} in the batch is signed with a configured HMAC key.`, source);
      }
      let signed = 0;
      items.forEach((entry: unknown, index) => {
        const item = (entry as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem;
        const check = checkItem(item, secrets, validator);
        if (check.signed) signed++;
        if (check.reason) {
          refused.push({ index, reason: check.reason });
          return;
        }
        const fields = item as NotificationRequestItem;
        const raw = Buffer.from(JSON.stringify({ live: body.live, notificationItems: [{ NotificationRequestItem: fields }] }));
        events.push({
          id: `${fields.pspReference}:${fields.eventCode}:${fields.success}`,
          type: fields.eventCode,
          occurredAt: isoTime(fields.eventDate, receivedAt),
          subject: fields.pspReference,
          payload: fields,
          item: index,
          body: { raw, contentType: 'application/json', signatureHeaders: {} },
        });
      });
      // Nothing in it is Adyen's: refused as a whole, its items not listed.
      if (signed === 0) throw new SignatureVerificationError(`No item of the ${refused.length} in the batch is signed with a configured HMAC key.`, source);
      return { events, refused };
    },

    // A pspReference: 16 digits.
    sampleId: () => String(randomBytes(8).readBigUInt64BE()).padStart(20, '0').slice(-16),

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const item = {
        additionalData: {},
        amount: { currency: 'EUR', value: 4200 },
        eventCode: type,
        eventDate: timestamp.toISOString(),
        merchantAccountCode: 'DurableWebhooksDevelopment',
        merchantReference: `order-${id.slice(-6)}`,
        paymentMethod: 'visa',
        pspReference: id,
        reason: '',
        success: 'true',
        ...payload,
      } as unknown as NotificationRequestItem;
      item.additionalData = { ...item.additionalData, hmacSignature: validator.calculateHmac(item, firstSecret(secrets, source)) };
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }) };
    },
  };
}

/** Whether an item is signed by a configured key, and why it cannot be recorded (no reason when it can). */
function checkItem(item: unknown, keys: readonly string[], validator: HmacValidator): { signed: boolean; reason?: string } {
  const refuse = (reason: string, signed = false) => ({ signed, reason });
  if (typeof item !== 'object' || item === null) return refuse('The item has no "NotificationRequestItem" object.');
  const fields = item as Partial<NotificationRequestItem>;
  if (typeof fields.additionalData?.hmacSignature !== 'string') return refuse('The item has no "additionalData.hmacSignature".');
  const signed = keys.some((key) => {
    try {
      return validator.validateHMAC(fields as NotificationRequestItem, key);
    } catch {
      return false;
    }
  });
  if (!signed) return refuse('The item\'s hmacSignature does not match it with any configured HMAC key.');
  for (const name of ['pspReference', 'eventCode', 'success'] as const) {
    if (typeof fields[name] !== 'string' || fields[name] === '') return refuse(`The item has no "${name}".`, true);
  }
  return { signed: true };
}

/** An Adyen HMAC key: 32 bytes, hex. */
const HMAC_KEY = /^[0-9a-fA-F]{64}$/;

export const adyenProvider = defineProvider({
  kind: ProviderKind.ADYEN,
  description: "Adyen's standard webhooks: each item of the batch signed on its own (`hmacSignature`), verified by `@adyen/api-library`.",
  builtIn: { name: 'adyen', secretEnv: 'ADYEN_HMAC_KEY', developmentSecret: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' },
  create: ({ name, secrets }) => createAdyenAdapter({ source: name, secrets }),
  samples: { AUTHORISATION: adyenAuthorisation },
});
