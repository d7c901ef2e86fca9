import express, { type Request, type RequestHandler, type Router } from 'express';
import { parse as parseLossless } from 'lossless-json';
import type { Database } from '../db/database';
import { ApiAuthError, InvalidRequestError, ResourceNotFoundError } from '../core/errors';
import { checkDestination } from '../outbound/destination';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint } from '../db/endpoints';
import type { MessageService } from '../outbound/messages';
import type { ApiToken } from '../config';
import type { Logger } from '../core/logger';
import { safeEqual } from '../providers/secrets';
import { bearerToken, limitFailedAttempts } from './bearer';
import { routeErrorHandler } from './problem';

export interface ApiDeps {
  db: Database;
  messages: MessageService;
  tokens: ApiToken[];
  allowPrivateEndpoints: boolean;
  logger: Logger;
}

/** Largest accepted `/v1` body: a message's payload is delivered to each endpoint in one request. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/** Idempotency keys longer than this are refused. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * Our own API under `/v1`, behind `Authorization: Bearer <one of API_TOKENS>`; each token acts in
 * its named scope, which owns endpoints, messages and idempotency keys.
 */
export function createApiRouter(deps: ApiDeps): Router {
  const router = express.Router();
  // Refused tokens are rate-limited per client address, as on /admin and /codec.
  router.use(limitFailedAttempts(deps.tokens.map(({ token }) => token)), authenticate(deps));
  router.use(express.text({ limit: MAX_MESSAGE_BYTES, type: () => true, inflate: false }), parseLosslessly);
  router.use(messageRoutes(deps));
  router.use(endpointRoutes(deps));
  router.use(
    routeErrorHandler({
      realm: 'durable-webhooks api',
      internalDetail: 'The request failed on our side; retry it with the same Idempotency-Key.',
      logger: deps.logger,
      what: 'API request',
    }),
  );
  return router;
}

/** Each token acts in its named scope: `res.locals.scope`. */
function authenticate(deps: ApiDeps): RequestHandler {
  return (req, res, next) => {
    const token = bearerToken(req);
    const match = token ? deps.tokens.find((candidate) => safeEqual(candidate.token, token)) : undefined;
    if (!match) throw new ApiAuthError('Send Authorization: Bearer <one of API_TOKENS>.');
    res.locals.scope = match.scope;
    next();
  };
}

/** Bodies are parsed losslessly: a payload's numbers (beyond 2^53 too) are stored and delivered as written. */
const parseLosslessly: RequestHandler = (req, _res, next) => {
  if (typeof req.body !== 'string' || req.body === '') {
    req.body = undefined;
  } else {
    try {
      req.body = parseLossless(req.body);
    } catch {
      throw new InvalidRequestError('The body is not valid JSON.');
    }
  }
  next();
};

const scopeOf = (res: express.Response) => res.locals.scope as string;

/** `/v1/messages`: publish a message once per Idempotency-Key, show it, erase its payload. */
function messageRoutes({ messages }: ApiDeps): Router {
  const router = express.Router();
  router.post('/messages', async (req, res) => {
    const key = req.header('idempotency-key');
    if (!key) throw new InvalidRequestError('The Idempotency-Key header is required: a unique value per message, the same on every retry of it.');
    if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw new InvalidRequestError(`The Idempotency-Key may be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
    const { eventType, payload } = objectBody(req);
    if (typeof eventType !== 'string' || !/^[\w.:-]{1,200}$/.test(eventType)) {
      throw new InvalidRequestError('"eventType" is required: letters, digits and . _ : - (for example order.shipped).');
    }
    if (payload === undefined) throw new InvalidRequestError('"payload" is required (any JSON value).');
    const { replayed, receipt } = await messages.publish(scopeOf(res), key, { eventType, payload });
    if (replayed) res.set('Idempotent-Replayed', 'true');
    res.status(replayed ? 200 : 201).json(receipt);
  });

  router.get('/messages/:id', async (req, res) => {
    res.json(await messages.view(scopeOf(res), req.params.id!));
  });

  router.post('/messages/:id/erase', async (req, res) => {
    const { reason } = objectBody(req);
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 500)
      throw new InvalidRequestError('"reason" is required: why the payload is erased (at most 500 characters).');
    res.json(await messages.erase(scopeOf(res), req.params.id!, reason));
  });
  return router;
}

/** `/v1/endpoints`: where a scope's messages are delivered, each with its own signing secret. */
function endpointRoutes(deps: ApiDeps): Router {
  const { db } = deps;
  const router = express.Router();
  router.post('/endpoints', async (req, res) => {
    const body = objectBody(req);
    const url = await checkDestination(body.url, { allowPrivate: deps.allowPrivateEndpoints });
    const endpoint = await createEndpoint(db, scopeOf(res), {
      url: url.toString(),
      description: description(body.description),
      eventTypes: eventTypes(body.eventTypes),
    });
    res.status(201).json(endpoint);
  });

  router.get('/endpoints', async (_req, res) => {
    res.json({ endpoints: await listEndpoints(db, scopeOf(res)) });
  });

  router.get('/endpoints/:id', async (req, res) => {
    res.json(found(await getEndpoint(db, scopeOf(res), req.params.id!), req.params.id!));
  });

  router.patch('/endpoints/:id', async (req, res) => {
    const body = objectBody(req);
    const changes: Parameters<typeof updateEndpoint>[3] = {};
    if ('url' in body) changes.url = (await checkDestination(body.url, { allowPrivate: deps.allowPrivateEndpoints })).toString();
    if ('description' in body) changes.description = description(body.description);
    if ('eventTypes' in body) changes.eventTypes = eventTypes(body.eventTypes);
    if ('disabled' in body) {
      if (typeof body.disabled !== 'boolean') throw new InvalidRequestError('"disabled" must be true or false.');
      changes.disabled = body.disabled;
    }
    res.json(found(await updateEndpoint(db, scopeOf(res), req.params.id!, changes), req.params.id!));
  });

  router.delete('/endpoints/:id', async (req, res) => {
    if (!(await deleteEndpoint(db, scopeOf(res), req.params.id!))) throw new ResourceNotFoundError('endpoint', req.params.id!);
    res.status(204).end();
  });

  router.post('/endpoints/:id/rotate-secret', async (req, res) => {
    res.json(found(await rotateSecret(db, scopeOf(res), req.params.id!), req.params.id!));
  });
  return router;
}

function objectBody(req: Request): Record<string, unknown> {
  if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) throw new InvalidRequestError('The body must be a JSON object.');
  return req.body as Record<string, unknown>;
}

function found<T>(value: T | undefined, id: string): T {
  if (value === undefined) throw new ResourceNotFoundError('endpoint', id);
  return value;
}

function description(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > 500) throw new InvalidRequestError('"description" must be a string of at most 500 characters.');
  return value;
}

function eventTypes(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || !value.every((type) => typeof type === 'string' && type !== '')) {
    throw new InvalidRequestError('"eventTypes" must be a list of event type names, or null for all.');
  }
  return value as string[];
}
