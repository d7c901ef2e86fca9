import { randomUUID } from 'node:crypto';
import { MalformedEventError, SignatureVerificationError } from '../core/delivery-errors';
import { objectId, parseJsonObject, requireString, stringsAt } from './json';
import { firstSecret, hmacSha256Hex, safeEqual } from './secrets';
import { ProviderKind } from '../../contracts';
import { adapter, type Delivery, type ProviderAdapter, type SampleEvent, type VerifiedEvent } from './types';
import githubIssuesOpened from './fixtures/github.issues.opened.json';
import { MIB } from './limits';
import { defineProvider } from './define';

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/**
 * GitHub: `X-Hub-Signature-256` (HMAC-SHA256 of the raw body) with each configured secret in turn,
 * on JSON and form-encoded (`payload=`) bodies. The event ID is `X-GitHub-Delivery`; the type is
 * `X-GitHub-Event` plus `.action` when the body has one.
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
 *
 * GitHub signs neither a timestamp nor the delivery header, so there is no replay window to check;
 * the event carries the body's SHA-256 instead, and the ledger runs a body once per source.
 */
export function createGitHubAdapter(options: { source: string; secrets: readonly string[] }): ProviderAdapter {
  const { source, secrets } = options;
  return adapter({
    kind: ProviderKind.GITHUB,
    fields: { id: 'X-GitHub-Delivery header', type: 'X-GitHub-Event header and "action"', unsigned: ['id', 'type'] },
    contentTypes: [JSON_TYPE, FORM_TYPE],
    signatureHeaders: ['content-type', 'x-hub-signature-256', 'x-github-delivery', 'x-github-event'],

    async check({ rawBody, headers }: Delivery) {
      const signature = headers['x-hub-signature-256'];
      if (typeof signature !== 'string' || signature === '') {
        throw new SignatureVerificationError('The X-Hub-Signature-256 header is missing. Set a secret on the GitHub webhook.', { source: source });
      }
      if (!secrets.some((secret) => safeEqual(signature, `sha256=${hmacSha256Hex(secret, rawBody)}`))) {
        throw new SignatureVerificationError('X-Hub-Signature-256 does not match the body with any configured secret.', { source: source });
      }
      return {};
    },

    read({ rawBody, headers, receivedAt }: Delivery) {
      const id = requireString(headers['x-github-delivery'], 'delivery ID (X-GitHub-Delivery header)', source);
      const event = requireString(headers['x-github-event'], 'event name (X-GitHub-Event header)', source);
      const payload = parseJsonObject(bodyText(rawBody, source), source);
      return { events: [readGitHubEvent({ id, event, payload, occurredAt: receivedAt })] };
    },

    sampleId: () => randomUUID(),

    sign({ id, type, payload }: SampleEvent) {
      const [event, action] = splitType(type);
      const body = JSON.stringify(action ? { action, ...payload } : payload);
      return {
        headers: {
          'content-type': JSON_TYPE,
          'x-github-delivery': id,
          'x-github-event': event,
          'x-hub-signature-256': `sha256=${hmacSha256Hex(firstSecret(secrets, source), body)}`,
        },
        body,
      };
    },
  });
}

/**
 * The event the receiver makes of a GitHub delivery, whether it came as a webhook or from the
 * deliveries API (backfill): ID = the delivery GUID, type = event name + `.action`.
 */
export function readGitHubEvent({
  id,
  event,
  payload,
  occurredAt,
}: {
  id: string;
  event: string;
  payload: Record<string, unknown>;
  occurredAt: Date;
}): VerifiedEvent {
  const action = typeof payload.action === 'string' ? payload.action : undefined;
  return { id, type: action ? `${event}.${action}` : event, occurredAt: occurredAt.toISOString(), subject: subjectOf(payload), payload };
}

/** The JSON text of a GitHub body: the body itself, or its `payload` field when form-encoded. */
export function bodyText(rawBody: Buffer, source: string): string {
  const text = rawBody.toString('utf8');
  // The form is told by its bytes, never by the unsigned Content-Type: GitHub's is exactly one
  // `payload=` field, and a JSON body (which starts with "{") is read as JSON whatever it is labelled.
  if (!text.startsWith(FORM_FIELD)) return text;
  if (text.includes('&')) throw new MalformedEventError('A form-encoded GitHub body is exactly one "payload" field.', { source: source });
  return new URLSearchParams(text).get('payload')!;
}

const FORM_FIELD = 'payload=';

function splitType(type: string): [string, string | undefined] {
  const dot = type.indexOf('.');
  return dot === -1 ? [type, undefined] : [type.slice(0, dot), type.slice(dot + 1)];
}

/**
 * `acme/widgets#12` for an issue or pull request of an organisation's repository, `repository 1296269#12`
 * for a user's: its owner's login names a person, so it stays out of Temporal (input and summary).
 * The repository alone, or the hook's ID, for other events.
 */
function subjectOf(payload: Record<string, unknown>): string | undefined {
  const repository = payload.repository as { id?: unknown; full_name?: unknown; owner?: { type?: unknown } } | undefined;
  const repo =
    repository?.owner?.type === 'Organization' && typeof repository.full_name === 'string'
      ? repository.full_name
      : typeof repository?.id === 'number'
        ? `repository ${repository.id}`
        : undefined;
  const item = (payload.issue ?? payload.pull_request) as { number?: unknown } | undefined;
  if (repo && typeof item?.number === 'number') return `${repo}#${item.number}`;
  return repo ?? objectId(payload.hook);
}

export const githubProvider = defineProvider({
  kind: ProviderKind.GITHUB,
  description: 'GitHub: `X-Hub-Signature-256`, HMAC-SHA256 over the body; the delivery ID and event name are unsigned.',
  builtIn: { name: 'github', secretEnv: 'GITHUB_WEBHOOK_SECRET', developmentSecret: 'durable-webhooks-development-only' },
  create: ({ name, secrets }) => createGitHubAdapter({ source: name, secrets }),
  samples: { 'issues.opened': githubIssuesOpened },
  // GitHub caps its payloads at 25 MB: https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap
  maxBodyBytes: 25 * MIB,
  // GitHub's meta API lists the ranges its hooks come from: https://docs.github.com/en/rest/meta/meta
  publishedAddresses: { url: 'https://api.github.com/meta', urlEnv: 'GITHUB_ADDRESSES_URL', read: (list) => stringsAt(list, 'hooks') },
});
