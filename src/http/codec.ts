import cors from 'cors';
import express, { type Router } from 'express';
import type { Payload, PayloadCodec } from '@temporalio/common';
// The SDK exports its proto3 JSON form of a payload (what the UI and the CLI send) only from here.
import { JSONToPayload, payloadToJSON, type JSONPayload } from '@temporalio/common/lib/proto-utils';
import { InvalidRequestError } from '../core/errors';
import type { Logger } from '../core/logger';
import type { NamedToken } from '../config';
import { limitFailedAttempts, requireToken } from './bearer';
import { routeErrorHandler } from './problem';

export interface CodecDeps {
  codec: PayloadCodec;
  /** The namespace whose payloads this codec holds the keys to; a request for another is refused. */
  namespace: string;
  /** The admin tokens and CODEC_TOKEN (named `codec`), which opens only this endpoint. */
  tokens: NamedToken[];
  /** Origins allowed to call from a browser: the Temporal UI's. */
  origins: string[];
  logger: Logger;
}

/**
 * `POST /codec/encode` and `/codec/decode`: Temporal's remote codec protocol, for the Temporal UI
 * and the `temporal` CLI (`--codec-endpoint <receiver>/codec --codec-auth "Bearer $CODEC_TOKEN"`).
 * Behind CODEC_TOKEN (or an admin token); CORS lets the UI's origin call it from the operator's browser.
 * https://github.com/temporalio/samples-go/blob/main/codec-server/protocol.md
 */
export function createCodecRouter(deps: CodecDeps): Router {
  const router = express.Router();
  router.use(
    cors({ origin: deps.origins, methods: ['POST'], allowedHeaders: ['Content-Type', 'Authorization', 'X-Namespace'], credentials: true, maxAge: 600 }),
  );
  router.use(limitFailedAttempts(deps.tokens.map(({ token }) => token)), requireToken(deps.tokens, 'CODEC_TOKEN or ADMIN_TOKEN'));
  router.use(express.json({ limit: '8mb', inflate: false }));
  for (const direction of ['encode', 'decode'] as const) {
    router.post(`/${direction}`, async (req, res) => {
      const namespace = req.headers['x-namespace'];
      if (typeof namespace === 'string' && namespace !== '' && namespace !== deps.namespace) {
        throw new InvalidRequestError(`This codec holds the keys of namespace "${deps.namespace}", not "${namespace}".`);
      }
      const payloads = readPayloads(req.body);
      const done = await deps.codec[direction](payloads);
      res.json({ payloads: done.map(payloadToJSON) });
    });
  }
  router.use(
    routeErrorHandler({
      realm: 'durable-webhooks admin',
      internalDetail: 'The codec could not process these payloads (a key it does not hold?). See the receiver log.',
      logger: deps.logger,
      what: 'codec request',
    }),
  );
  return router;
}

/** The request's payloads, from the proto3 JSON the protocol speaks (the SDK's own conversion). */
function readPayloads(body: unknown): Payload[] {
  const payloads = (body as { payloads?: unknown } | undefined)?.payloads;
  const refused = new InvalidRequestError('Send {"payloads": [...]}, each payload with "metadata" and "data" in base64.');
  if (!Array.isArray(payloads)) throw refused;
  try {
    return payloads.map((payload: JSONPayload) => JSONToPayload(payload));
  } catch {
    throw refused;
  }
}
