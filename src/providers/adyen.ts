import { randomBytes } from 'node:crypto';
import HmacValidator from '@adyen/api-library/lib/src/utils/hmacValidator';
import type { NotificationRequestItem } from '@adyen/api-library/lib/src/typings/notification/models';
import { ConfigError } from '../core/errors';
import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';
import { batchItems, MIB } from './limits';
import { isoTime, parseJsonObject } from './json';
import { firstSecret } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Checked, type Delivery, type ProviderAdapter, type RefusedItem, type SampleEvent, type VerifiedEvent } from './types';
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
  const itemsOf = (rawBody: Buffer) => {
    const body = parseJsonObject(rawBody.toString('utf8'), source);
    if (!Array.isArray(body.notificationItems)) throw new MalformedEventError('The body has no "notificationItems" list.', { source: source });
    return { live: body.live, items: batchItems(body.notificationItems, source) };
  };
  return adapter({
    kind: ProviderKind.ADYEN,
    fields: { id: '"pspReference", "eventCode" and "success" of each item', type: '"eventCode" of each item' },
    contentTypes: ['application/json'],
    batch: true,
    // The signatures are in the body, one per item.
    signatureHeaders: [],
    acknowledgement: { contentType: 'text/plain', body: '[accepted]' },

    // The signatures are the items': each is checked on its own, and one that fails is refused alone.
    async check({ rawBody }: Delivery) {
      const { items } = itemsOf(rawBody);
      // A batch in which no item even carries a signature is refused whole, before any per-item work.
      if (
        !items.some(
          (entry) =>
            typeof (entry as { NotificationRequestItem?: { additionalData?: { hmacSignature?: unknown } } } | null)?.NotificationRequestItem?.additionalData
              ?.hmacSignature === 'string',
        )
      ) {
        throw new SignatureVerificationError(`No item of the ${items.length} in the batch is signed with a configured HMAC key.`, { source: source });
      }
      const refused: RefusedItem[] = [];
      items.forEach((entry: unknown, index) => {
        const reason = itemSignatureFault((entry as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem, secrets, validator);
        if (reason) refused.push({ index, reason });
      });
      // Nothing in it is Adyen's: refused as a whole, its items not listed.
      if (refused.length === items.length)
        throw new SignatureVerificationError(`No item of the ${items.length} in the batch is signed with a configured HMAC key.`, { source: source });
      return { refused };
    },

    read({ rawBody, receivedAt }: Delivery, checked: Checked) {
      const { live, items } = itemsOf(rawBody);
      const events: VerifiedEvent[] = [];
      const refused: RefusedItem[] = [...(checked.refused ?? [])];
      const unsigned = new Set(refused.map((item) => item.index));
      items.forEach((entry: unknown, index) => {
        if (unsigned.has(index)) return;
        const item: unknown = (entry as { NotificationRequestItem?: unknown } | null)?.NotificationRequestItem;
        const reason = identityFault(item);
        if (reason) {
          refused.push({ index, reason });
          return;
        }
        const fields = item as NotificationRequestItem;
        const raw = Buffer.from(JSON.stringify({ live, notificationItems: [{ NotificationRequestItem: fields }] }));
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
      return { events, refused: refused.sort((a, b) => a.index - b.index) };
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
      return {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }),
      };
    },
  });
}

/** Why an item is not signed by a configured key, or nothing when it is. */
function itemSignatureFault(item: unknown, keys: readonly string[], validator: HmacValidator): string | undefined {
  if (typeof item !== 'object' || item === null) return 'The item has no "NotificationRequestItem" object.';
  const fields = item as Partial<NotificationRequestItem>;
  if (typeof fields.additionalData?.hmacSignature !== 'string') return 'The item has no "additionalData.hmacSignature".';
  const signed = keys.some((key) => {
    try {
      return validator.validateHMAC(fields as NotificationRequestItem, key);
    } catch {
      return false;
    }
  });
  return signed ? undefined : "The item's hmacSignature does not match it with any configured HMAC key.";
}

/** Why an item cannot be told apart from others (Adyen's duplicates share these three), or nothing when it can. */
function identityFault(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return 'The item has no "NotificationRequestItem" object.';
  const fields = item as Record<string, unknown>;
  const missing = (['pspReference', 'eventCode', 'success'] as const).find((name) => typeof fields[name] !== 'string' || fields[name] === '');
  return missing && `The item has no "${missing}".`;
}

/** An Adyen HMAC key: 32 bytes, hex. */
const HMAC_KEY = /^[0-9a-fA-F]{64}$/;

export const adyenProvider = defineProvider({
  kind: ProviderKind.ADYEN,
  description: "Adyen's standard webhooks: each item of the batch signed on its own (`hmacSignature`), verified by `@adyen/api-library`.",
  builtIn: { name: 'adyen', secretEnv: 'ADYEN_HMAC_KEY', developmentSecret: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' },
  create: ({ name, secrets }) => createAdyenAdapter({ source: name, secrets }),
  samples: { AUTHORISATION: adyenAuthorisation },
  // Adyen sends one to a few items per delivery: a MiB holds thousands.
  maxBodyBytes: MIB,
});
