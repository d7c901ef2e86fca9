import { randomUUID } from 'node:crypto';
import express from 'express';
import { listen } from '../../src/dev/http-server';
import { IdempotencyStore } from '../../src/dev/idempotency-store';

/**
 * A local server speaking Resend's send endpoint (`POST /emails`) with its idempotency behaviour
 * (https://resend.com/docs/dashboard/emails/idempotency-keys): same key and body → the first
 * response again; same key, other body → 409 invalid_idempotent_request; a repeat while the first
 * runs → 409 concurrent_idempotent_requests. The real `resend` SDK talks to it over HTTP.
 */
export interface SentEmail {
  id: string;
  idempotencyKey?: string;
  from: string;
  to: string[];
  subject: string;
  text?: string;
  html?: string;
}

export async function startResendStandIn() {
  const store = new IdempotencyStore();
  const emails: SentEmail[] = [];
  const requests: Array<{ idempotencyKey?: string; replayed: boolean }> = [];
  let failures: Array<{ status: number; message: string }> = [];
  let acceptedApiKey: string | undefined;
  let holds: Array<(release: () => void) => void> = [];

  const app = express();
  app.use(express.text({ type: '*/*' }));
  app.post('/emails', (req, res) => {
    if (acceptedApiKey !== undefined && req.header('authorization') !== `Bearer ${acceptedApiKey}`) {
      res.status(403).json({ statusCode: 403, name: 'invalid_api_key', message: 'API key is invalid' });
      return;
    }
    const failure = failures.shift();
    if (failure !== undefined) {
      res.status(failure.status).json({ statusCode: failure.status, name: 'internal_server_error', message: failure.message });
      return;
    }
    const key = req.header('idempotency-key');
    const body = JSON.parse(String(req.body)) as Omit<SentEmail, 'id' | 'to'> & { to: string | string[] };
    const send = () => {
      const email: SentEmail = { ...body, id: randomUUID(), idempotencyKey: key, to: [body.to].flat() };
      emails.push(email);
      return { status: 200, body: { id: email.id } };
    };
    if (!key) {
      requests.push({ replayed: false });
      const response = send();
      res.status(response.status).json(response.body);
      return;
    }
    const outcome = store.begin(key, String(req.body));
    requests.push({ idempotencyKey: key, replayed: outcome.kind === 'replay' });
    if (outcome.kind === 'mismatch') {
      res.status(409).json({ statusCode: 409, name: 'invalid_idempotent_request', message: 'Same idempotency key used with a different request payload.' });
    } else if (outcome.kind === 'in-flight') {
      res.status(409).json({
        statusCode: 409,
        name: 'concurrent_idempotent_requests',
        message: 'Same idempotency key used while the original request is still in progress.',
      });
    } else if (outcome.kind === 'replay') {
      res.status(outcome.response.status).json(outcome.response.body);
    } else {
      const response = send();
      outcome.finish(response);
      const [hold, ...rest] = holds;
      holds = rest;
      // A held answer: the email is sent and stored under its key, and the caller does not know yet.
      if (hold) hold(() => res.status(response.status).json(response.body));
      else res.status(response.status).json(response.body);
    }
  });

  const server = await listen(app);
  return {
    url: server.url,
    close: server.close,
    /** Distinct emails sent (replays are not counted). */
    emails,
    /** Every request that reached the idempotency layer, replays included. */
    requests,
    failNext: (...statuses: number[]) => {
      failures = [...failures, ...statuses.map((status) => ({ status, message: 'Injected failure from the stand-in.' }))];
    },
    /** The next email is answered with this status and message. */
    failNextWith: (status: number, message: string) => {
      failures = [...failures, { status, message }];
    },
    /** Holds the answer to the next email sent (after it is sent); resolves with the function that releases it. */
    holdNext: () => new Promise<() => void>((held) => (holds = [...holds, held])),
    /** Accept only this API key (403 invalid_api_key for others); undefined accepts any. */
    acceptApiKey: (key: string | undefined) => {
      acceptedApiKey = key;
    },
  };
}

export type ResendStandIn = Awaited<ReturnType<typeof startResendStandIn>>;
