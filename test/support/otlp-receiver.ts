import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

/** One span as OTLP/HTTP JSON carries it, with its resource's service name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

/** A local OTLP/HTTP receiver speaking JSON (`POST /v1/traces`), as a collector or Jaeger does. */
export async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; exported: string[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const exported: string[] = [];
  const app = express();
  app.use(express.json({ limit: '16mb' }));
  app.post('/v1/traces', (req, res) => {
    exported.push(JSON.stringify(req.body));
    const { resourceSpans = [] } = req.body as {
      resourceSpans?: Array<{
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans?: Array<{ spans?: Array<Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: OtlpAttribute[] }> }>;
      }>;
    };
    for (const { resource, scopeSpans = [] } of resourceSpans) {
      const service = String(attributesOf(resource?.attributes)['service.name']);
      for (const { spans: batch = [] } of scopeSpans) {
        for (const span of batch)
          spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            attributes: attributesOf(span.attributes),
          });
      }
    }
    res.json({});
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    /** Every export request's body as received (events, status messages and all). */
    exported,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function attributesOf(attributes: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
}
