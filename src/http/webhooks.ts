import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { AddressListUnavailableError, AddressNotAllowedError, UnsupportedContentTypeError } from '../core/delivery-errors';
import { errorLine } from '../core/redact';
import type { Source } from '../providers/registry';
import { bodyGuards } from './body-guards';
import { problemType, sendProblem, toProblem } from './problem';
import { deliver, recordRefusal, type WebhookDeps } from './webhook-delivery';

/**
 * `POST /webhooks/:source`: the source and its content type, its address allowlist, the body guards
 * (./body-guards.ts), then the source's adapter verifies the raw bytes and each event is started
 * through the intake (./webhook-delivery.ts); answered 202, 200 for a duplicate, or a problem counted
 * by source and outcome and worded for the provider that will retry it.
 */
export function createWebhookRouter(deps: WebhookDeps): express.Router {
  const refuse = deliveryErrors(deps);
  const { refuseBeforeReading, limitLargeBodies, enforceBodyPace, readRawBody } = bodyGuards(
    deps.limits,
    (error, req, res) => refuse(error, req, res, () => undefined),
    (res) => (res.locals.source as Source).maxBodyBytes,
  );
  const webhooks = express.Router();
  webhooks.post('/:source', selectSource(deps), checkAddress(deps), refuseBeforeReading, limitLargeBodies, enforceBodyPace, readRawBody, receive(deps));
  webhooks.all('/:source', (_req, res) => {
    res.set('Allow', 'POST');
    sendProblem(res, { type: problemType('method-not-allowed'), title: 'Method not allowed', status: 405, detail: 'Webhooks are delivered with POST.' });
  });
  webhooks.use(refuse);
  return webhooks;
}

/** The source the path names, if the request's content type is one its provider sends. */
function selectSource({ sources }: WebhookDeps): RequestHandler<{ source: string }> {
  return (req, res, next) => {
    const source = sources.get(req.params.source);
    const contentType = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    if (!contentType || !source.adapter.contentTypes.includes(contentType)) {
      throw new UnsupportedContentTypeError({ source: source.name, contentType, accepted: source.adapter.contentTypes });
    }
    res.locals.source = source;
    next();
  };
}

/** A source that keeps to its provider's published addresses: counted, and in `enforce` mode refused before a byte of the body is read. */
function checkAddress({ allowlists, metrics }: WebhookDeps): RequestHandler {
  return (req, res, next) => {
    const source = res.locals.source as Source;
    const mode = allowlists?.modeOf(source.name);
    if (!mode) return next();
    const verdict = allowlists!.verdict(source.name, req.ip);
    metrics.allowlist.inc({ source: source.name, verdict });
    if (mode === 'enforce' && verdict === 'outside') throw new AddressNotAllowedError({ source: source.name });
    if (mode === 'enforce' && verdict === 'unknown') throw new AddressListUnavailableError({ source: source.name });
    next();
  };
}

/**
 * One span per delivery; the Temporal client interceptor carries it into the workflow and its
 * activities, so one trace covers the event from this request to its last side effect.
 */
function receive(deps: WebhookDeps): RequestHandler {
  const tracer = trace.getTracer('durable-webhooks');
  return (req, res) => {
    const source = res.locals.source as Source;
    const attributes = { 'http.request.method': 'POST', 'http.route': '/webhooks/:source', 'webhook.source': source.name };
    return tracer.startActiveSpan(`POST /webhooks/${source.name}`, { kind: SpanKind.SERVER, attributes }, async (span) => {
      try {
        await deliver(deps, req, res, source, span);
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    });
  };
}

/**
 * The webhook route owns its errors: they are deliveries, counted by source and outcome, worded for
 * the provider that will retry them, and, when refused, recorded for the console.
 */
function deliveryErrors(deps: WebhookDeps): ErrorRequestHandler {
  return (error, req, res, _next) => {
    // Answered already (a body too slow, cut while it was being read): nothing more to say.
    if (res.headersSent) return;
    // Refused before its body was read to the end: close the connection after the answer rather
    // than read (or wait for) the rest of it.
    if (!req.complete) res.set('Connection', 'close');
    const problem = toProblem(error, 'The event was not recorded; retry the delivery.');
    const source = (res.locals.source as Source | undefined)?.name ?? 'unknown';
    deps.metrics.deliveries.inc({ source, outcome: problem.type.split(':').pop() });
    if (problem.status >= 500) {
      deps.logger.error({ source, path: req.path, status: problem.status, error: errorLine(error) }, 'delivery not recorded');
    } else {
      // The detail names identifiers only (a header, a limit, another source), never the payload.
      deps.logger.warn({ source, path: req.path, status: problem.status, problem: problem.type, detail: problem.detail }, 'delivery rejected');
      recordRefusal(deps, req, source, problem.status, problem.type.split(':').pop()!, problem.detail);
    }
    sendProblem(res, problem);
  };
}
