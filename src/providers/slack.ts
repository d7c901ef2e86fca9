import { randomBytes } from 'node:crypto';
import { verifySlackRequest } from '@slack/bolt/dist/receivers/verify-request';
import { SignatureVerificationError } from '../core/delivery-errors';
import { checkTolerance, requiredHeader } from './headers';
import { isoTime, parseJsonObject, requireString, utf8Text } from './json';
import { firstSecret, hmacSha256Hex } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent } from './types';
import slackAppMention from './fixtures/slack.app_mention.json';
import { MIB } from './limits';
import { defineProvider } from './define';

/** Slack refuses a request older than five minutes. */
const SLACK_TOLERANCE_SECONDS = 300;

/**
 * Slack's Events API: `X-Slack-Signature` (`v0=` hex HMAC-SHA256 of `v0:<timestamp>:<raw body>`) and
 * `X-Slack-Request-Timestamp`, checked by `@slack/bolt`'s `verifySlackRequest` with each signing
 * secret, at the receiver's clock (Slack refuses requests older than 5 minutes). The event ID is
 * `event_id`, the type the inner `event.type`. A `url_verification` request is answered with its
 * challenge and starts nothing; a retry (`X-Slack-Retry-Num`) carries the same `event_id` and is a
 * duplicate. Slack waits 3 seconds for an answer.
 * https://api.slack.com/authentication/verifying-requests-from-slack
 *
 * Only the verification module is imported: the package's entry point loads the whole Bolt app.
 */
export function createSlackAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  return adapter({
    kind: ProviderKind.SLACK,
    fields: { id: '"event_id"', type: '"event.type"' },
    contentTypes: ['application/json'],
    signatureHeaders: ['x-slack-signature', 'x-slack-request-timestamp'],

    async check({ rawBody, headers, receivedAt }: Delivery) {
      const signature = requiredHeader(headers, 'x-slack-signature', source);
      const timestamp = requiredHeader(headers, 'x-slack-request-timestamp', source);
      if (!/^\d+$/.test(timestamp))
        throw new SignatureVerificationError('X-Slack-Request-Timestamp must be whole seconds since the epoch.', { source: source });
      // Bolt refuses only an old timestamp (after this, never); one from the future is as suspect.
      checkTolerance(Number(timestamp), receivedAt, SLACK_TOLERANCE_SECONDS, 'X-Slack-Request-Timestamp', source);
      const body = utf8Text(rawBody, source);
      const verified = secrets.some((signingSecret) => {
        try {
          verifySlackRequest({
            signingSecret,
            body,
            headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': Number(timestamp) },
            nowMilliseconds: receivedAt.getTime(),
          });
          return true;
        } catch {
          return false;
        }
      });
      if (!verified) throw new SignatureVerificationError('X-Slack-Signature does not match the body with any configured signing secret.', { source: source });
      return {};
    },

    read({ rawBody, receivedAt }: Delivery) {
      const payload = parseJsonObject(rawBody.toString('utf8'), source);
      if (payload.type === 'url_verification') {
        const challenge = requireString(payload.challenge, 'challenge ("challenge")', source);
        return { events: [], challenge: { contentType: 'application/json', body: JSON.stringify({ challenge }) } };
      }
      const event = (payload.event ?? {}) as Record<string, unknown>;
      const eventTime = payload.event_time;
      return {
        events: [
          {
            id: requireString(payload.event_id, 'event ID ("event_id")', source),
            type: requireString(event.type, 'type ("event.type")', source),
            occurredAt: isoTime(typeof eventTime === 'number' ? eventTime * 1000 : undefined, receivedAt),
            subject: typeof event.channel === 'string' ? event.channel : undefined,
            payload,
          },
        ],
      };
    },

    sampleId: () => `Ev${randomBytes(5).toString('hex').toUpperCase()}`,

    sign({ id, type, payload, timestamp }: SampleEvent) {
      const seconds = Math.floor(timestamp.getTime() / 1000);
      const body = JSON.stringify({
        token: 'development',
        team_id: 'T0DEVELOP',
        api_app_id: 'A0DEVELOP',
        event: { type, event_ts: `${seconds}.000100`, ...payload },
        type: 'event_callback',
        event_id: id,
        event_time: seconds,
      });
      return {
        headers: {
          'content-type': 'application/json',
          'x-slack-request-timestamp': String(seconds),
          'x-slack-signature': `v0=${hmacSha256Hex(firstSecret(secrets, source), `v0:${seconds}:${body}`)}`,
        },
        body,
      };
    },
  });
}

export const slackProvider = defineProvider({
  kind: ProviderKind.SLACK,
  description: "Slack's Events API: `X-Slack-Signature`, HMAC-SHA256 over `v0:<timestamp>:<body>`.",
  builtIn: { name: 'slack', secretEnv: 'SLACK_SIGNING_SECRET', developmentSecret: 'slack-durable-webhooks-development-only' },
  create: ({ name, secrets }) => createSlackAdapter({ source: name, secrets }),
  samples: { app_mention: slackAppMention },
  // Slack's events and forms are a few KiB; a modal's submitted state stays far under a MiB.
  maxBodyBytes: MIB,
});
