import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { fetch as undiciFetch } from 'undici';
import { ApplicationFailure } from '@temporalio/activity';
import { FailureType, type Activities, type DeliveryAttempt, type DeliveryOutcome } from '../contracts';
import { loadPayload } from '../src/db/messages';
import type { Database } from '../src/db/database';
import { recordAttempt } from '../src/db/delivery-attempts';
import { disableEndpoint, endpointSecrets } from '../src/db/endpoints';
import { checkLiteralHost, parseEndpointUrl, safeAgent } from '../src/outbound/destination';
import { count } from './metrics';

/** How long an endpoint has to answer one attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** At most this much of a response body is read (and only to drain it). */
export const MAX_RESPONSE_BYTES = 4096;

export function createDeliveryActivities({ db, allowPrivateEndpoints }: { db: Database; allowPrivateEndpoints: boolean }): Pick<Activities, 'attemptDelivery'> {
  const agent = safeAgent({ allowPrivate: allowPrivateEndpoints });
  /**
   * One attempt: POST the message signed as a Standard Webhook. `webhook-id` is the message ID
   * on every attempt, so receivers can deduplicate; the timestamp and signature are the attempt's.
   * Each attempt is recorded; a 410 disables the endpoint.
   */
  async function attempt(input: DeliveryAttempt): Promise<DeliveryOutcome> {
    const endpoint = await endpointSecrets(db, input.endpointId);
    if (!endpoint || endpoint.deleted) return { result: 'endpoint_deleted' };
    if (endpoint.disabled) return { result: 'endpoint_disabled' };

    const data = input.payload === undefined ? await loadPayload(db, input.messageId, input.fingerprint) : JSON.stringify(input.payload);
    if (data === undefined || data === null)
      throw ApplicationFailure.nonRetryable(
        `The payload of message ${input.messageId} is ${data === null ? 'erased' : 'not stored'}.`,
        FailureType.PAYLOAD_MISSING,
      );
    // The payload's JSON text goes out as it was sent: no parse and re-serialise to change a number.
    // An endpoint that takes the payload as it is (a Slack incoming webhook) gets it unwrapped.
    const body =
      endpoint.bodyFormat === 'payload' ? data : `{"type":${JSON.stringify(input.eventType)},"timestamp":${JSON.stringify(input.createdAt)},"data":${data}}`;
    const attemptedAt = new Date();
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      // Checked again at delivery time: the agent checks every address it connects to (DNS rebinding).
      const url = parseEndpointUrl(endpoint.url);
      checkLiteralHost(url, { allowPrivate: allowPrivateEndpoints });
      const response = await undiciFetch(url, {
        method: 'POST',
        dispatcher: agent,
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'durable-webhooks',
          'webhook-id': input.messageId,
          'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
          'webhook-signature': endpoint.secrets.map((secret) => new Webhook(secret).sign(input.messageId, attemptedAt, body)).join(' '),
        },
        body,
      });
      statusCode = response.status;
      const excerpt = await readCapped(response.body);
      if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}${excerpt ? `: ${excerpt.slice(0, 200)}` : ''}`;
    } catch (cause) {
      error = describe(cause);
    }
    const latencyMs = Math.round(performance.now() - started);
    await recordAttempt(db, input.messageId, { endpointId: input.endpointId, attempt: input.attempt, at: attemptedAt, statusCode, latencyMs, error });

    if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { result: 'delivered', statusCode };
    if (statusCode === 410) {
      await disableEndpoint(db, input.endpointId, 'the endpoint answered 410 Gone');
      return { result: 'gone' };
    }
    return { result: 'failed', statusCode, error: error ?? 'unknown error' };
  }

  return {
    /** One attempt, counted by outcome (`durable_webhooks_deliveries`). */
    async attemptDelivery(input) {
      const outcome = await attempt(input);
      count('deliveries', { outcome: outcome.result });
      return outcome;
    },
  };
}

async function readCapped(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size >= MAX_RESPONSE_BYTES) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const message = (error as Error).message ?? String(error);
  return cause?.message ? `${message}: ${cause.code ?? ''} ${cause.message}`.trim() : message;
}
