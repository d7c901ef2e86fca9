import { Client, Connection, type ConnectionOptions, type DataConverter } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { flag } from '../core/env';
import { EncryptionCodec, parseEncryptionKeys } from './codec';

/** The address the dev server listens on, and the one used when nothing else is configured. */
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

export interface TemporalSettings {
  namespace: string;
  connectionOptions: ConnectionOptions;
  /** With PAYLOAD_ENCRYPTION_KEYS set, the encryption codec and encoded failures; every client and worker uses them. */
  dataConverter?: DataConverter;
}

/**
 * Temporal connection settings from Temporal's own environment names (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and the config file),
 * so the same variables drive this service and the `temporal` CLI.
 */
export function temporalSettings(env: NodeJS.ProcessEnv = process.env, { worker = false }: { worker?: boolean } = {}): TemporalSettings {
  const { connectionOptions, namespace } = loadClientConnectConfig({
    profile: env.TEMPORAL_PROFILE,
    overrideEnvVars: definedOnly(env),
  });
  const keys = parseEncryptionKeys(env.PAYLOAD_ENCRYPTION_KEYS);
  const ns = namespace ?? 'default';
  // A worker refuses plaintext payloads (input nobody encrypted) unless a migration needs them.
  const plaintext = !worker || flag(env, 'PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT') ? 'allow' : 'refuse';
  const codec = keys.length > 0 ? new EncryptionCodec(keys, { namespace: ns, plaintext }) : undefined;
  return {
    namespace: ns,
    connectionOptions: { ...(connectionOptions as ConnectionOptions), address: connectionOptions.address ?? DEFAULT_TEMPORAL_ADDRESS },
    ...(codec && { dataConverter: { payloadCodecs: [codec], failureConverterPath: require.resolve('./encoded-failures') } }),
  };
}

/**
 * A client whose connection is made on first use, so the receiver starts (and answers 503) while
 * Temporal is down, and reconnects by itself when it is back. It carries the active trace into the
 * workflows it starts and signals (OpenTelemetry; nothing is added while tracing is off).
 */
export function lazyClient(settings: TemporalSettings): Client {
  return new Client({
    connection: Connection.lazy(settings.connectionOptions),
    namespace: settings.namespace,
    dataConverter: settings.dataConverter,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
