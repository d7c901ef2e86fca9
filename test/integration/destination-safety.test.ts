import { MockActivityEnvironment } from '@temporalio/testing';
import { createDeliveryActivities } from '../../activities/delivery';
import { createEndpoint } from '../../src/db/endpoints';
import { storePayload } from '../../src/db/messages';
import { startEndpointServer } from '../support/endpoint-server';
import { startStack, type WorkerStack } from '../support/stack';

/** With ALLOW_PRIVATE_ENDPOINTS off, private addresses are refused when registered and when delivered to. */
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { API_TOKENS: 'safe:tok_safe_0123456789abcdef0123456789' } });
});
afterAll(() => stack.close());

it('refuses to register an endpoint on a loopback or metadata address (400), storing nothing', async () => {
  for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data/', 'http://localhost:3000/webhooks/stripe']) {
    const response = await fetch(`${stack.url}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: 'Bearer tok_safe_0123456789abcdef0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/private or reserved address/);
  }
  expect((await stack.db.query('SELECT count(*)::int AS n FROM endpoints')).rows).toEqual([{ n: 0 }]);
});

it.each([
  ['a private IP address', (url: string) => url],
  ['a hostname resolving to a private address (DNS rebinding: refused by the connecting agent)', (url: string) => url.replace('127.0.0.1', 'localhost')],
])('checks again at delivery time: an endpoint on %s is not called', async (_case, address) => {
  const endpoint = await startEndpointServer();
  // Stored as if it had passed registration: the address changed, or DNS now answers differently.
  const { id } = await createEndpoint(stack.db, 'scope', { url: address(endpoint.url), description: null, eventTypes: null });
  const { attemptDelivery } = createDeliveryActivities({ db: stack.db, allowPrivateEndpoints: false });
  const messageId = `msg_safety_${id}`;
  await storePayload(stack.db, { id: messageId, fingerprint: 'f', scope: 'scope', eventType: 'a.b', payloadJson: '{}' });
  const outcome = await new MockActivityEnvironment().run(attemptDelivery, {
    messageId,
    endpointId: id,
    attempt: 1,
    eventType: 'a.b',
    fingerprint: 'f',
    createdAt: new Date().toISOString(),
  });
  expect(outcome).toMatchObject({ result: 'failed', statusCode: null, error: expect.stringMatching(/private or reserved address/) });
  expect(endpoint.received).toEqual([]);
  await endpoint.close();
});
