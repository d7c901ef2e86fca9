import { randomBytes } from 'node:crypto';
import { getExpectedTwilioSignature, getSignatureAlgorithm } from 'twilio/lib/webhooks/webhooks';
import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';
import { optionalHeader, requiredHeader } from './headers';
import { KIB, MAX_FORM_FIELDS } from './limits';
import { firstSecret, safeEqual } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent } from './types';
import twilioMessageDelivered from './fixtures/twilio.message.delivered.json';
import { defineProvider, signedUrl } from './define';

const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * Twilio: `X-Twilio-Signature`, the base64 HMAC-SHA1 (or HMAC-SHA256, as the
 * `X-Twilio-Webhooks-Signature-Settings` header says) of the full URL followed by the sorted form
 * parameters, computed by the `twilio` package's `getExpectedTwilioSignature` once per auth token. The URL is
 * the one configured in Twilio, query included (`TWILIO_WEBHOOK_URL`), never rebuilt from the
 * request or a proxy's headers. Twilio signs no timestamp.
 *
 * The event ID is `I-Twilio-Idempotency-Token` when Twilio sends it (the same on every retry of
 * one callback), else the resource SID and its status (`SM…:delivered`), which one status callback
 * of one resource has once. The type is `message.<status>` or `call.<status>`.
 * https://www.twilio.com/docs/usage/webhooks/webhooks-security
 *
 * Only the webhook module is imported: the package's entry point loads the whole REST client.
 */
export function createTwilioAdapter(options: { source: string; secrets: readonly string[]; url: string }): ProviderAdapter {
  const { source, secrets, url } = options;
  return adapter({
    kind: ProviderKind.TWILIO,
    fields: { id: 'I-Twilio-Idempotency-Token header (or the SID and status)', type: 'MessageStatus or CallStatus', unsigned: ['id'] },
    contentTypes: [FORM_TYPE],
    signatureHeaders: ['x-twilio-signature', 'x-twilio-webhooks-signature-settings', 'i-twilio-idempotency-token'],

    async check({ rawBody, headers }: Delivery) {
      const signature = requiredHeader(headers, 'x-twilio-signature', source);
      const algorithm = getSignatureAlgorithm(optionalHeader(headers, 'x-twilio-webhooks-signature-settings'));
      const params = formParams(rawBody, source);
      // One HMAC per auth token, of the URL exactly as configured (what Twilio signs); the package's
      // validateRequest would try up to six forms of it per token.
      if (!secrets.some((authToken) => safeEqual(signature, getExpectedTwilioSignature(authToken, url, params, algorithm)))) {
        throw new SignatureVerificationError(`X-Twilio-Signature does not match ${url} and the parameters with any configured auth token.`, { source: source });
      }
      return {};
    },

    read({ rawBody, headers, receivedAt }: Delivery) {
      const params = formParams(rawBody, source);
      const { sid, status, resource } = resourceOf(params);
      const token = optionalHeader(headers, 'i-twilio-idempotency-token');
      if (token === undefined && (sid === undefined || status === undefined)) {
        throw new MalformedEventError('The request has no I-Twilio-Idempotency-Token header and no resource SID with a status to identify it.', {
          source: source,
        });
      }
      return {
        events: [
          {
            id: token ?? `${sid}:${status}`,
            type: status === undefined ? resource : `${resource}.${status}`,
            occurredAt: receivedAt.toISOString(),
            subject: sid,
            payload: params,
          },
        ],
      };
    },

    sampleId: () => `idem_${randomBytes(12).toString('hex')}`,

    sign({ id, type, payload }: SampleEvent) {
      const [resource, status] = type.split('.');
      const prefix = resource === 'call' ? 'Call' : 'Message';
      const params: Record<string, string> = {
        AccountSid: 'ACdevelopment',
        [`${prefix}Sid`]: `${prefix === 'Call' ? 'CA' : 'SM'}${randomBytes(16).toString('hex')}`,
        [`${prefix}Status`]: status ?? 'delivered',
        ...Object.fromEntries(Object.entries(payload).map(([key, value]) => [key, String(value)])),
      };
      return {
        headers: {
          'content-type': FORM_TYPE,
          'i-twilio-idempotency-token': id,
          'x-twilio-signature': getExpectedTwilioSignature(firstSecret(secrets, source), url, params),
        },
        body: new URLSearchParams(params).toString(),
      };
    },
  });
}

/**
 * The form's parameters as Twilio signs them: a name sent several times keeps every value. At most
 * `MAX_FORM_FIELDS` fields, counted by their `&` separators on the bytes before anything is decoded
 * (`URLSearchParams` over a 24 MiB form of empty fields held a process for minutes); then linear in
 * the body (values of a repeated name are appended, never copied).
 */
export function formParams(rawBody: Buffer, source: string): Record<string, string | string[]> {
  if (separatorsUpTo(rawBody, AMPERSAND, MAX_FORM_FIELDS) >= MAX_FORM_FIELDS) {
    throw new MalformedEventError(`The form has more than ${MAX_FORM_FIELDS} fields; at most ${MAX_FORM_FIELDS} are accepted.`, { source: source });
  }
  const params: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(rawBody.toString('utf8'))) {
    const existing = params[key];
    if (existing === undefined) params[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else params[key] = [existing, value];
  }
  return params;
}

const AMPERSAND = 0x26;

/** How many times `byte` occurs in `bytes`, counting no further than `limit`. */
function separatorsUpTo(bytes: Buffer, byte: number, limit: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count < limit; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}

function resourceOf(params: Record<string, string | string[]>): { sid?: string; status?: string; resource: string } {
  const text = (name: string) => (typeof params[name] === 'string' && params[name] !== '' ? (params[name] as string) : undefined);
  if (text('CallSid')) return { sid: text('CallSid'), status: text('CallStatus'), resource: 'call' };
  if (text('MessageSid') ?? text('SmsSid'))
    return { sid: text('MessageSid') ?? text('SmsSid'), status: text('MessageStatus') ?? text('SmsStatus'), resource: 'message' };
  return { sid: text('Sid'), status: text('Status'), resource: 'request' };
}

export const twilioProvider = defineProvider({
  kind: ProviderKind.TWILIO,
  description: "Twilio: `X-Twilio-Signature`, HMAC-SHA1 over the URL and the form's parameters, as the `twilio` package computes it.",
  builtIn: { name: 'twilio', secretEnv: 'TWILIO_AUTH_TOKEN', developmentSecret: 'twilio-durable-webhooks-development-only', urlEnv: 'TWILIO_WEBHOOK_URL' },
  create: (config) => createTwilioAdapter({ source: config.name, secrets: config.secrets, url: signedUrl(config) }),
  samples: { 'message.delivered': twilioMessageDelivered },
  // A status callback is about 30 fields, under 2 KiB.
  maxBodyBytes: 64 * KIB,
  // Phone numbers and a message's text, under keys that name neither.
  personal: ['/From', '/To', '/Body', '/Caller', '/Called', '/ForwardedFrom'],
});
