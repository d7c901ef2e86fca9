import { startDevServer, type DevServer, type DevServerOptions } from '../../src/dev/dev-server';
import { freePort } from './ports';

/**
 * A Temporal dev server on free ports (gRPC, and the Web UI 1,000 above), started again on other
 * ports when it exits before it serves: a free port is free when asked, and an outgoing connection
 * of a busy test run can take it (the ephemeral range) before the server binds it.
 */
export async function startDevServerOnFreePorts(options: Omit<DevServerOptions, 'address'>, attempts = 3): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDevServer({ ...options, address: `127.0.0.1:${await freePort(1000)}` });
    } catch (error) {
      if (attempt === attempts || !/exited with code .* before it was ready/.test((error as Error).message)) throw error;
    }
  }
}
