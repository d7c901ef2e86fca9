import { randomUUID } from 'node:crypto';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { SignatureVerificationError } from '../core/delivery-errors';
import { checkTolerance, requiredHeader } from './headers';
import { isoTime, objectId, parseJsonObject, requireString } from './json';
import { firstSecret, hmacSha256Hex } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent } from './types';
import linearIssueCreate from './fixtures/linear.Issue.create.json';
import { MIB } from './limits';
import { defineProvider } from './define';

/** Linear refuses a `webhookTimestamp` further than a minute from now. */
export const LINEAR_TOLERANCE_SECONDS = 60;

/**
 * Linear: `Linear-Signature`, the hex HMAC-SHA256 of the raw body, checked by `@linear/sdk`'s
 * `LinearWebhookClient.verify` with each secret. The signed body's `webhookTimestamp` (milliseconds)
 * must be within a minute of the receiver's clock. The event ID is the `Linear-Delivery` header, the
 * type `"type"` and `"action"` (`Issue.create`).
 * https://linear.app/developers/webhooks#securing-webhooks
 */
export function createLinearAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  const clients = secrets.map((secret) => new LinearWebhookClient(secret));
  return adapter({
    kind: ProviderKind.LINEAR,
    fields: { id: 'Linear-Delivery header', type: '"type" and "action"', unsigned: ['id'] },
    contentTypes: ['application/json'],
    signatureHeaders: ['linear-signature', 'linear-delivery', 'linear-event'],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const signature = requiredHeader(headers, 'linear-signature', source);
      // The client checks the HMAC first and then the timestamp against its own wall clock; an error
      // about the timestamp therefore means the signature matched, and the age is checked here,
      // against the receiver's clock, so that a stored body can be verified again later.
      const verified = clients.some((client) => {
        try {
          return client.verify(rawBody, signature);
        } catch (error) {
          return /timestamp/i.test((error as Error).message);
        }
      });
      if (!verified) throw new SignatureVerificationError('Linear-Signature does not match the body with any configured secret.', { source: source });
      // The signed time is in the body: read here, as part of the check.
      const timestamp = parseJsonObject(rawBody.toString('utf8'), source).webhookTimestamp;
      if (typeof timestamp !== 'number') throw new SignatureVerificationError('The signed body has no numeric "webhookTimestamp".', { source: source });
      checkTolerance(timestamp / 1000, receivedAt, LINEAR_TOLERANCE_SECONDS, '"webhookTimestamp"', source);
      return {};
    },

    read({ rawBody, headers, receivedAt }: Delivery) {
      const payload = parseJsonObject(rawBody.toString('utf8'), source);
      const type = requireString(payload.type, 'type ("type")', source);
      return {
        events: [
          {
            id: requireString(headers['linear-delivery'], 'delivery ID (Linear-Delivery header)', source),
            type: typeof payload.action === 'string' ? `${type}.${payload.action}` : type,
            occurredAt: isoTime(payload.createdAt, receivedAt),
            subject: identifierOf(payload.data),
            payload,
          },
        ],
      };
    },

    sampleId: () => randomUUID(),

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const [entity, action] = type.split('.');
      const body = JSON.stringify({
        action: action ?? 'create',
        type: entity,
        createdAt: timestamp.toISOString(),
        data: payload,
        organizationId: 'development',
        webhookTimestamp: timestamp.getTime(),
        webhookId: 'development',
      });
      return {
        headers: {
          'content-type': 'application/json',
          'linear-delivery': id,
          'linear-event': entity ?? type,
          'linear-signature': hmacSha256Hex(firstSecret(secrets, source), body),
        },
        body,
      };
    },
  });
}

/** `ENG-42` for issues, the object's ID otherwise. */
function identifierOf(data: unknown): string | undefined {
  const identifier = (data as { identifier?: unknown } | null)?.identifier;
  return typeof identifier === 'string' ? identifier : objectId(data);
}

export const linearProvider = defineProvider({
  kind: ProviderKind.LINEAR,
  description: 'Linear: `Linear-Signature`, HMAC-SHA256 over the body, verified by `@linear/sdk`; the delivery ID is unsigned.',
  builtIn: { name: 'linear', secretEnv: 'LINEAR_WEBHOOK_SECRET', developmentSecret: 'lin_wh_durable_webhooks_development_only' },
  create: ({ name, secrets }) => createLinearAdapter({ source: name, secrets }),
  samples: { 'Issue.create': linearIssueCreate },
  // One entity's JSON; Linear documents no maximum.
  maxBodyBytes: 5 * MIB,
});
