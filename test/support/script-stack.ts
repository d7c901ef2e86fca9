import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { startLocalPostgres } from '../../src/cluster/postgres';
import { startDevServer, type DevServer } from '../../src/dev/dev-server';
import { prepareNamespace } from '../../src/temporal/namespace';
import { freePort } from './ports';

/**
 * What a script of test/support (`npm run record-histories`, `npm run screenshots`) runs a stack on,
 * as Jest's global setup does for the tests: a fresh Temporal dev server with our namespace setup,
 * and PostgreSQL (DATABASE_URL's, else a throwaway cluster), both named in the environment
 * `startStack` reads. `stop()` ends both.
 */
export async function startScriptServers(name: string): Promise<{ server: DevServer; stop(): Promise<void> }> {
  const server = await startDevServer({
    address: `127.0.0.1:${await freePort(1000)}`,
    dataDir: mkdtempSync(path.join(tmpdir(), `dw-${name}-`)),
    stdio: 'ignore',
  });
  const postgres = process.env.DATABASE_URL ? undefined : startLocalPostgres({ port: await freePort(), user: 'webhooks' });
  process.env.TEMPORAL_ADDRESS = server.address;
  process.env.DATABASE_URL ??= postgres!.url;
  const connection = await Connection.connect({ address: server.address });
  await prepareNamespace(connection, 'default');
  await connection.close();
  return {
    server,
    async stop() {
      await server.stop();
      postgres?.remove();
    },
  };
}
