import { randomBytes } from 'node:crypto';
import express from 'express';
import { listen } from './http-server';
import { IdempotencyStore, type StoredResponse } from './idempotency-store';
import {
  createdByCheckout,
  decline,
  DECLINED_PAYMENT_METHOD,
  KNOWN_PAYMENT_METHOD,
  noSuchPaymentMethod,
  parseForm,
  type PaymentIntent,
  type StripeEvent,
} from './stripe-objects';

/**
 * A local server speaking the Stripe endpoints our flows use (PaymentIntents create, confirm, update and search, Events list, Customers retrieve), with Stripe's idempotency behaviour (https://docs.stripe.com/api/idempotent_requests):
 * same key and parameters → the stored response with `Idempotent-Replayed: true`; same key, other
 * parameters → 400 idempotency_error; a repeat while the first runs → 409. The real `stripe` SDK
 * talks to it over HTTP. It counts distinct effects so tests can assert "exactly one charge".
 */

/** The API key the stand-in is called with (it checks none). */
export const STRIPE_STAND_IN_KEY = 'sk_test_local_stand_in';

export interface StripeRequest {
  method: string;
  path: string;
  idempotencyKey?: string;
  params: Record<string, unknown>;
  replayed: boolean;
  /** Set when the stand-in failed the request on purpose, before the idempotency layer. */
  injectedStatus?: number;
  /** The `Stripe-Request-Trigger` header: what made the SDK send it (`event=evt_…` for a thin event's fetch). */
  trigger?: string;
}

/** The customer fields the stand-in keeps; `retrieve` answers them as a Customer object. */
export interface StandInCustomer {
  id: string;
  balance: number;
  currency: string | null;
  delinquent: boolean;
  deleted?: boolean;
}

/** `listing`: a later page of the Events API (one with `starting_after`), held before it answers. */
export type HoldPhase = 'processing' | 'responding' | 'listing';

export async function startStripeStandIn() {
  const store = new IdempotencyStore();
  const requests: StripeRequest[] = [];
  const paymentIntents = new Map<string, PaymentIntent>();
  let failures: number[] = [];
  let holds: Array<{ phase: HoldPhase; held: (release: () => void) => void }> = [];
  const holdIn = async (phase: HoldPhase) => {
    if (holds[0]?.phase !== phase) return;
    const { held } = holds.shift()!;
    await new Promise<void>((release) => held(release));
  };

  // Events the Events API lists, newest first, as Stripe lists them.
  const events: StripeEvent[] = [];
  const revokedKeys = new Set<string>();
  const customers = new Map<string, StandInCustomer>();

  const app = express();
  app.use(express.text({ type: '*/*' }));

  app.use((req, res, next) => {
    const key = /^Bearer (.+)$/.exec(req.header('authorization') ?? '')?.[1];
    if (key && revokedKeys.has(key)) {
      res.status(401).json({ error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${key.slice(0, 8)}…` } });
      return;
    }
    next();
  });

  app.use((req, res, next) => {
    // Faults before Stripe's idempotency layer (a 500 from the edge): nothing is stored for the key.
    const status = failures.shift();
    if (status !== undefined) {
      requests.push({ method: req.method, path: req.path, idempotencyKey: req.header('idempotency-key'), params: {}, replayed: false, injectedStatus: status });
      res.status(status).json({ error: { type: 'api_error', message: 'Injected failure from the stand-in.' } });
      return;
    }
    next();
  });

  const idempotent =
    (handle: (req: express.Request, params: Record<string, unknown>) => Promise<StoredResponse>): express.RequestHandler =>
    async (req, res) => {
      const params = parseForm(typeof req.body === 'string' ? req.body : '');
      const key = req.header('idempotency-key');
      const record = (replayed: boolean) => requests.push({ method: req.method, path: req.path, idempotencyKey: key, params, replayed });
      if (!key) {
        record(false);
        const response = await handle(req, params);
        res.status(response.status).json(response.body);
        return;
      }
      const outcome = store.begin(key, `${req.method} ${req.path} ${req.body ?? ''}`);
      if (outcome.kind === 'mismatch') {
        record(false);
        res.status(400).json({
          error: {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}'.`,
          },
        });
      } else if (outcome.kind === 'in-flight') {
        record(false);
        res.status(409).json({
          error: {
            type: 'idempotency_error',
            code: 'idempotency_key_in_use',
            message: 'There is currently another in-progress request using this idempotency key.',
          },
        });
      } else if (outcome.kind === 'replay') {
        record(true);
        res.status(outcome.response.status).set('Idempotent-Replayed', 'true').json(outcome.response.body);
      } else {
        record(false);
        const response = await handle(req, params);
        await holdIn('processing');
        // A request Stripe refuses (400) stores nothing under its key: a retry with the key runs again.
        if (response.status === 400) outcome.abandon();
        else outcome.finish(response);
        await holdIn('responding');
        res.status(response.status).set('Idempotency-Key', key).json(response.body);
      }
    };

  app.post(
    '/v1/payment_intents',
    idempotent(async (_req, params) => {
      const paymentMethod = typeof params.payment_method === 'string' ? params.payment_method : null;
      if (paymentMethod && !KNOWN_PAYMENT_METHOD.test(paymentMethod)) return noSuchPaymentMethod(paymentMethod);
      const intent: PaymentIntent = {
        id: `pi_${randomBytes(12).toString('hex')}`,
        object: 'payment_intent',
        amount: Number(params.amount),
        currency: String(params.currency),
        customer: typeof params.customer === 'string' ? params.customer : null,
        payment_method: paymentMethod,
        status: params.confirm === 'true' ? 'succeeded' : 'requires_confirmation',
        metadata: (params.metadata as Record<string, string>) ?? {},
      };
      paymentIntents.set(intent.id, intent);
      return paymentMethod === DECLINED_PAYMENT_METHOD ? decline(intent) : { status: 200, body: { ...intent } };
    }),
  );

  // Confirming a declined PaymentIntent again, with a new payment method: how Stripe retries a payment.
  app.post(
    '/v1/payment_intents/:id/confirm',
    idempotent(async (req, params) => {
      const intent = paymentIntents.get(String(req.params.id));
      if (!intent)
        return {
          status: 404,
          body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${req.params.id}'` } },
        };
      if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation') {
        return {
          status: 400,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'payment_intent_unexpected_state',
              message: `This PaymentIntent's status is ${intent.status}, so it cannot be confirmed.`,
              payment_intent: { ...intent },
            },
          },
        };
      }
      if (typeof params.payment_method === 'string' && !KNOWN_PAYMENT_METHOD.test(params.payment_method)) return noSuchPaymentMethod(params.payment_method);
      if (typeof params.payment_method === 'string') intent.payment_method = params.payment_method;
      if (intent.payment_method === DECLINED_PAYMENT_METHOD) return decline(intent);
      intent.status = 'succeeded';
      return { status: 200, body: { ...intent } };
    }),
  );

  // The Events API: newest first, `created[gte|lte]`, `types[]`, `limit`, cursor `starting_after`, `has_more`.
  app.get('/v1/events', async (req, res) => {
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    requests.push({ method: req.method, path: req.path, idempotencyKey: undefined, params: Object.fromEntries(query), replayed: false });
    const gte = Number(query.get('created[gte]') ?? -Infinity);
    const lte = Number(query.get('created[lte]') ?? Infinity);
    // Stripe's SDK writes arrays indexed (`types[0]=a&types[1]=b`); `types[]=a` is read too.
    const types = [...query].filter(([name]) => /^types\[\d*\]$/.test(name)).map(([, value]) => value);
    const limit = Math.min(Number(query.get('limit') ?? 10), 100);
    let matching = events.filter((event) => event.created >= gte && event.created <= lte && (types.length === 0 || types.includes(event.type)));
    const after = query.get('starting_after');
    if (after) await holdIn('listing');
    if (after) matching = matching.slice(matching.findIndex((event) => event.id === after) + 1);
    res.json({ object: 'list', url: '/v1/events', has_more: matching.length > limit, data: matching.slice(0, limit) });
  });

  // Stripe's search, for the one form we use: `metadata['k']:'v'` clauses joined by AND.
  app.get('/v1/payment_intents/search', (req, res) => {
    const query = String(req.query.query ?? '');
    requests.push({ method: req.method, path: req.path, idempotencyKey: undefined, params: { query }, replayed: false });
    const clauses = query.split(' AND ').map((clause) => /^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(clause.trim()));
    if (clauses.some((clause) => !clause)) {
      res.status(400).json({ error: { type: 'invalid_request_error', message: `The stand-in does not understand the search query ${query}.` } });
      return;
    }
    const wanted = clauses.map((clause) => [clause![1]!, clause![2]!.replace(/\\(.)/g, '$1')] as const);
    const data = [...paymentIntents.values()].filter((intent) => wanted.every(([key, value]) => intent.metadata[key] === value));
    res.json({ object: 'search_result', url: '/v1/payment_intents/search', has_more: false, next_page: null, data });
  });

  // Customers retrieve: a deleted one as Stripe answers it; one the stand-in was not given, as a new customer with nothing owed.
  app.get('/v1/customers/:id', (req, res) => {
    const id = String(req.params.id);
    requests.push({
      method: req.method,
      path: req.path,
      idempotencyKey: undefined,
      params: {},
      replayed: false,
      trigger: req.header('stripe-request-trigger'),
    });
    const customer = customers.get(id) ?? { id, balance: 0, currency: null, delinquent: false };
    res.json(customer.deleted ? { id, object: 'customer', deleted: true } : { ...customer, object: 'customer', livemode: false });
  });

  app.post(
    '/v1/payment_intents/:id',
    idempotent(async (req, params) => {
      const id = String(req.params.id);
      if (!id.startsWith('pi_'))
        return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${id}'` } } };
      // Checkout Sessions create their PaymentIntent inside Stripe; one we have not seen is taken as such.
      const intent = paymentIntents.get(id) ?? createdByCheckout(id);
      paymentIntents.set(id, intent);
      const metadata = (params.metadata as Record<string, string>) ?? {};
      Object.assign(intent.metadata, metadata);
      return { status: 200, body: intent };
    }),
  );

  const server = await listen(app);
  return {
    url: server.url,
    close: server.close,
    /** Every request, in order, including those failed on purpose. */
    requests,
    /** PaymentIntents created (including declined ones). */
    paymentIntents,
    /** Successful charges: PaymentIntents that succeeded. */
    charges: () => [...paymentIntents.values()].filter((intent) => intent.status === 'succeeded'),
    /** The next requests fail with these statuses before reaching the idempotency layer. */
    failNext: (...statuses: number[]) => {
      failures = [...failures, ...statuses];
    },
    /**
     * Holds the next new request after its effect: while still `processing` (its key in use, so a
     * repeat gets 409), or `responding` (response stored, not yet sent: kill the caller then).
     * Resolves with the release function once the request is held.
     */
    holdNext: (phase: HoldPhase) => new Promise<() => void>((held) => (holds = [...holds, { phase, held }])),
    /** Forgets every idempotency key, as Stripe does after 24 hours. */
    forgetIdempotencyKeys: () => store.forgetAll(),
    /** Adds events for the Events API to list (kept newest first). */
    addEvents: (...added: StripeEvent[]) => {
      events.push(...added);
      events.sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
    },
    /** Sets a customer as Customers retrieve answers it from now on. */
    setCustomer: (customer: StandInCustomer) => customers.set(customer.id, customer),
    /** Answers every request with this API key 401, as Stripe does for a revoked key. */
    revokeApiKey: (key: string) => revokedKeys.add(key),
  };
}

export type StripeStandIn = Awaited<ReturnType<typeof startStripeStandIn>>;
