import { spawn } from 'node:child_process';
import { eventually } from './eventually';
import { goTool } from './go-tools';
import { freePort } from './ports';

/**
 * Stripe's own stripe-mock (built by scripts/install-stripe-mock.sh when missing: its caller's hook allows GO_TOOL_BUILD_MS): it answers every API route
 * with fixture data and refuses, with a 400, any request its OpenAPI specification does not allow.
 * It keeps no state and honours no idempotency, which the stand-in does; this checks the shapes.
 */
export async function startStripeMock() {
  const stripeMock = await goTool('stripe-mock');
  const httpPort = await freePort();
  const httpsPort = await freePort();
  const child = spawn(stripeMock, ['-http-port', String(httpPort), '-https-port', String(httpsPort)], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${httpPort}`;
  const authorization = `Basic ${Buffer.from('sk_test_123:').toString('base64')}`;
  await eventually(
    'stripe-mock answers',
    () =>
      fetch(`${url}/v1/customers`, { headers: { authorization } }).then(
        (response) => response.ok,
        () => false,
      ),
    { timeoutMs: 15_000, intervalMs: 100 },
  );
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
