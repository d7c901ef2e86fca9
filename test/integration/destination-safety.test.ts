import { createDeliveryActivities } from '../../activities/delivery';
import { createEndpoint } from '../../src/outbound/endpoints';
import { startEndpointServer } from '../support/endpoint-server';
import { startStack, type WorkerStack } from '../support/stack';

/** With ALLOW_PRIVATE_ENDPOINTS off, private addresses are refused when registered and when delivered to. */
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { API_TOKENS: 'tok_safe' } });
});
afterAll(() => stack.close());

it('refuses to register an endpoint on a loopback or metadata address (400), storing nothing', async () => {
  for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data/', 'http://localhost:3000/webhooks/stripe']) {
    const response = await fetch(`${stack.url}/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: 'Bearer tok_safe', 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/private or reserved address/);
  }
  expect((await stack.db.query('SELECT count(*)::int AS n FROM endpoints')).rows).toEqual([{ n: 0 }]);
});

it('checks again at delivery time: an endpoint that now points at a private address is not called', async () => {
  const endpoint = await startEndpointServer();
  // As if the address had changed since registration (or DNS now answers with a private one).
  const { id } = await createEndpoint(stack.db, 'scope', { url: endpoint.url, description: null, eventTypes: null });
  const { attemptDelivery } = createDeliveryActivities({ db: stack.db, allowPrivateEndpoints: false });
  const outcome = await attemptDelivery({ messageId: 'msg_safety', endpointId: id, attempt: 1, eventType: 'a.b', payload: {}, createdAt: new Date().toISOString() });
  expect(outcome).toMatchObject({ result: 'failed', statusCode: null, error: expect.stringMatching(/private or reserved address/) });
  expect(endpoint.received).toEqual([]);
  await endpoint.close();
});
