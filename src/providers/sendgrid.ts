import { createPrivateKey, createPublicKey, randomBytes, sign as signEcdsa, verify as verifyEcdsa, type KeyObject } from 'node:crypto';
import { ConfigError } from '../core/errors';
import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';
import { isoTime } from './json';
import { checkTolerance, requiredHeader } from './headers';
import { batchItems, MIB } from './limits';
import { ProviderKind } from '../../contracts';
import { adapter, TIMESTAMP_TOLERANCE_SECONDS, type Delivery, type ProviderAdapter, type RefusedItem, type SampleEvent, type VerifiedEvent } from './types';
import sendgridDelivered from './fixtures/sendgrid.delivered.json';
import { defineProvider } from './define';

const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/**
 * The key pair `npm run dev`, `send` and the tests use when `SENDGRID_WEBHOOK_PUBLIC_KEY` is unset.
 * Public in this repository, like every development secret: production never uses it.
 */
export const SENDGRID_DEVELOPMENT_KEYS = {
  publicKey: 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEdc3rQVXgf1QRqBJq3R6v/eHrqBLxCbP0GqNJCIUrsa7iioFI+yZv695aZ6RaIpkgTcHJu6gVZJDL5EAbz1ukAw==',
  privateKey:
    'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmi0oBF/9pOvzD2FltuL2XbUP8F2sfUVnDn60Bga8i86hRANCAAR1zetBVeB/VBGoEmrdHq/94euoEvEJs/Qao0kIhSuxruKKgUj7Jm/r3lpnpFoimSBNwcm7qBVkkMvkQBvPW6QD',
} as const;

/**
 * SendGrid's Event Webhook: a JSON array of events, signed as a whole with ECDSA (P-256, SHA-256)
 * over `<timestamp><raw body>`, verified by `node:crypto` with the public key from the mail
 * settings (several during a rotation), and the timestamp is checked against the receiver's clock.
 * `@sendgrid/eventwebhook` is the reference the tests check our verdicts against, on SendGrid's own
 * examples; it is not called here because its pure-JavaScript ECDSA takes 15 to 50 ms per bogus
 * signature over a megabyte, and it verifies a UTF-8-decoded copy of the body. Each item is its own event: its ID `sg_event_id`, its type `event` (`delivered`,
 * `bounce`, …). An item without an ID is refused on its own; the others are recorded.
 * The body store keeps each item alone; its signature covered the whole batch, which is not kept.
 * https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features
 */
export function createSendGridAdapter(options: { source: string; publicKeys: readonly string[] }): ProviderAdapter {
  const { source } = options;
  const keys = options.publicKeys.map((key) => toPublicKey(key, source));

  return adapter({
    kind: ProviderKind.SENDGRID,
    fields: { id: '"sg_event_id" of each item', type: '"event" of each item' },
    contentTypes: ['application/json'],
    batch: true,
    signatureHeaders: [SIGNATURE_HEADER, TIMESTAMP_HEADER],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const signature = requiredHeader(headers, SIGNATURE_HEADER, source);
      const timestamp = requiredHeader(headers, TIMESTAMP_HEADER, source);
      if (!/^\d+$/.test(timestamp)) throw new SignatureVerificationError(`${TIMESTAMP_HEADER} must be whole seconds since the epoch.`, { source: source });
      checkTolerance(Number(timestamp), receivedAt, TIMESTAMP_TOLERANCE_SECONDS, `The ${TIMESTAMP_HEADER}`, source);
      // The raw bytes as received, after the timestamp; one verification per key.
      const signed = Buffer.concat([Buffer.from(timestamp), rawBody]);
      const offered = Buffer.from(signature, 'base64');
      const verified = keys.some((key) => {
        try {
          return verifyEcdsa('sha256', signed, { key, dsaEncoding: 'der' }, offered);
        } catch {
          return false;
        }
      });
      if (!verified) throw new SignatureVerificationError(`${SIGNATURE_HEADER} does not match the body with any configured public key.`, { source: source });
      return {};
    },

    read({ rawBody, receivedAt }: Delivery) {
      const items = parseArray(rawBody, source);
      const events: VerifiedEvent[] = [];
      const refused: RefusedItem[] = [];
      items.forEach((item, index) => {
        const event = readItem(item, index, receivedAt);
        if (typeof event === 'string') refused.push({ index, reason: event });
        else events.push(event);
      });
      return { events, refused };
    },

    sampleId: () => randomBytes(16).toString('base64url'),

    sign({ id, type, payload, timestamp }: SampleEvent) {
      if (!options.publicKeys.includes(SENDGRID_DEVELOPMENT_KEYS.publicKey)) {
        throw new Error(`Source "${source}": SendGrid signs with its own private key; samples can be signed only for the development key.`);
      }
      const seconds = Math.floor(timestamp.getTime() / 1000);
      const body = JSON.stringify([
        {
          email: 'customer@example.com',
          timestamp: seconds,
          event: type,
          sg_event_id: id,
          sg_message_id: `${randomBytes(11).toString('base64url')}.filter`,
          ...payload,
        },
      ]);
      const key = createPrivateKey({ key: Buffer.from(SENDGRID_DEVELOPMENT_KEYS.privateKey, 'base64'), format: 'der', type: 'pkcs8' });
      return {
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: String(seconds),
          [SIGNATURE_HEADER]: signEcdsa('sha256', Buffer.from(`${seconds}${body}`), key).toString('base64'),
        },
        body,
      };
    },
  });
}

/**
 * The verification key from SendGrid's mail settings: the base64 of a DER (SubjectPublicKeyInfo)
 * P-256 public key.
 */
function toPublicKey(key: string, source: string): KeyObject {
  try {
    const publicKey = createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
    if (publicKey.asymmetricKeyType === 'ec' && publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1') return publicKey;
  } catch {
    // Not a key at all: said below, as a key of another kind is.
  }
  throw new ConfigError(`Source "${source}": a SendGrid verification key is the base64 P-256 public key from its mail settings.`);
}

function parseArray(rawBody: Buffer, source: string): readonly unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new MalformedEventError('The body is not valid JSON.', { source: source });
  }
  if (!Array.isArray(value)) throw new MalformedEventError('The body must be a JSON array of events.', { source: source });
  return batchItems(value, source);
}

/** One item as an event stored on its own, or why it cannot be one. */
function readItem(item: unknown, index: number, receivedAt: Date): VerifiedEvent | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'The item is not a JSON object.';
  const fields = item as Record<string, unknown>;
  if (typeof fields.sg_event_id !== 'string' || fields.sg_event_id.trim() === '') return 'The item has no "sg_event_id".';
  if (typeof fields.event !== 'string' || fields.event.trim() === '') return 'The item has no "event".';
  const seconds = fields.timestamp;
  const raw = Buffer.from(JSON.stringify(fields));
  return {
    id: fields.sg_event_id,
    type: fields.event,
    occurredAt: isoTime(typeof seconds === 'number' ? seconds * 1000 : undefined, receivedAt),
    subject: typeof fields.sg_message_id === 'string' ? fields.sg_message_id : undefined,
    payload: fields,
    item: index,
    body: { raw, contentType: 'application/json', signatureHeaders: {} },
  };
}

export const sendgridProvider = defineProvider({
  kind: ProviderKind.SENDGRID,
  description: "SendGrid's Event Webhook: ECDSA P-256 over `<timestamp><body>`, verified with the public key from the mail settings.",
  builtIn: { name: 'sendgrid', secretEnv: 'SENDGRID_WEBHOOK_PUBLIC_KEY', developmentSecret: SENDGRID_DEVELOPMENT_KEYS.publicKey, keyIsPublic: true },
  create: ({ name, publicKeys }) => createSendGridAdapter({ source: name, publicKeys }),
  samples: { delivered: sendgridDelivered },
  // SendGrid posts batches of up to 768 KB.
  maxBodyBytes: MIB,
});
