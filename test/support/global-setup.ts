import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporalCliPath } from '../../src/core/tools';
import { prepareNamespace } from '../../src/temporal/namespace';
import { devServerDynamicConfigArgs } from '../../src/temporal/server-process';
import { startLocalPostgres } from '../../src/cluster/postgres';
import { freePort } from './ports';

/**
 * One real Temporal dev server (the pinned CLI from .tools/bin, never a download) for the whole run.
 * Its address reaches every test file through TEMPORAL_ADDRESS. Namespace setup is our own
 * prepareNamespace, so a broken setup fails the suite the way it would fail `npm run dev`.
 * Without DATABASE_URL, a throwaway PostgreSQL cluster serves the run.
 */
export default async function globalSetup(): Promise<void> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalCliPath() }, extraArgs: ['--log-level', 'error', ...devServerDynamicConfigArgs()] },
  });
  const address = env.address;
  const connection = await Connection.connect({ address });
  await prepareNamespace(connection, 'default');
  await connection.close();
  process.env.TEMPORAL_ADDRESS = address;
  process.env.TEMPORAL_NAMESPACE = 'default';
  (globalThis as { temporalTestEnv?: TestWorkflowEnvironment }).temporalTestEnv = env;

  if (!process.env.DATABASE_URL) {
    const postgres = startLocalPostgres({ port: await freePort(), user: 'webhooks' });
    process.env.DATABASE_URL = postgres.url;
    (globalThis as { throwawayPostgres?: { remove(): void } }).throwawayPostgres = postgres;
  }
}
