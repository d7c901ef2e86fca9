import { OTLPTraceExporter as OtlpGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResourcesSync, envDetectorSync, Resource, type IResource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ConfigError } from './errors';

/** A process's tracing, when the standard OTEL_* variables turn it on. */
export interface Tracing {
  resource: IResource;
  spanProcessor: SpanProcessor;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry tracing from the standard variables: on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, over `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`,
 * the default; `http/json`; `grpc`), as `OTEL_SERVICE_NAME` (default: the process's role). The
 * exporters read the rest themselves (headers, timeouts, `OTEL_BSP_*`). Registers the global tracer
 * provider, so the receiver's spans and the Temporal interceptors' spans join one trace.
 */
export function startTracing(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME || defaultServiceName }).merge(detectResourcesSync({ detectors: [envDetectorSync] }));
  const spanProcessor = new BatchSpanProcessor(exporterFor(protocol));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { resource, spanProcessor, shutdown: () => provider.shutdown() };
}

function exporterFor(protocol: string): SpanExporter {
  switch (protocol) {
    case 'http/protobuf':
      return new OtlpProtobufExporter();
    case 'http/json':
      return new OtlpJsonExporter();
    case 'grpc':
      return new OtlpGrpcExporter();
    default:
      throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf, http/json or grpc, not "${protocol}".`);
  }
}
