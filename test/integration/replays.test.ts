import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { loadReceiverConfig } from '../../src/config';
import { PROVIDERS } from '../../src/providers/index';
import { createAdapter } from '../../src/providers/registry';
import type { Delivery, ProviderAdapter, SignedRequest } from '../../src/providers/types';
import { githubHeaders, SECRETS, SECRETS_ENV } from '../support/signing';
import { post, startStack, type Stack } from '../support/stack';

/**
 * For every declared kind whose event ID travels outside the signature (`fields.unsigned`), a signed
 * delivery sent again under another ID is a replay: answered `200 duplicate` naming the first, stored
 * and started never. The unsigned header is found, not listed: each header a second signing changes
 * is carried over to the first delivery while its signature still checks out.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(() => stack?.close());

const { sources } = loadReceiverConfig({ ...SECRETS_ENV, PORT: '0' }, { development: true });
const kinds = PROVIDERS.flatMap((provider) => {
  const source = sources.find((candidate) => candidate.name === provider.builtIn?.name);
  const [type, payload] = Object.entries(provider.samples)[0] ?? [];
  return source && type && payload && createAdapter(source).fields.unsigned?.includes('id') ? [{ kind: provider.kind, source, type, payload }] : [];
});

const lowerCase = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** The first delivery's body and signature under the headers of a second signing its signature does not cover. */
async function replayOf(adapter: ProviderAdapter, first: SignedRequest, second: SignedRequest, receivedAt: Date): Promise<Record<string, string>> {
  const headers = lowerCase(first.headers);
  for (const [name, value] of Object.entries(lowerCase(second.headers))) {
    if (headers[name] === value) continue;
    const candidate = { ...headers, [name]: value };
    const delivery: Delivery = { rawBody: Buffer.from(first.body), headers: candidate, receivedAt };
    if (
      await adapter.check(delivery).then(
        () => true,
        () => false,
      )
    )
      headers[name] = value;
  }
  return headers;
}

it('finds a kind whose event ID is unsigned among those declared', () => {
  expect(kinds.map((entry) => entry.kind)).toEqual(expect.arrayContaining(['github', 'shopify', 'linear', 'twilio']));
});

it.each(kinds.map((entry) => [entry.kind, entry] as const))(
  '%s: the signed body under a new ID is a replay, answered and never started',
  async (_kind, { source, type, payload }) => {
    const adapter = createAdapter(source);
    const receivedAt = new Date();
    const first = adapter.sign({ id: adapter.sampleId(), type, payload, timestamp: receivedAt });
    const second = adapter.sign({ id: adapter.sampleId(), type, payload, timestamp: receivedAt });
    const replayHeaders = await replayOf(adapter, first, second, receivedAt);
    const idUnder = (headers: Record<string, string>) => adapter.read({ rawBody: Buffer.from(first.body), headers, receivedAt }, {}).events[0]!.id;
    const firstId = idUnder(lowerCase(first.headers));
    const replayId = idUnder(replayHeaders);
    expect(replayId).not.toBe(firstId);

    const url = `${stack.url}/webhooks/${source.name}`;
    expect(await post(url, first.headers, first.body)).toMatchObject({ status: 202, json: { status: 'started', eventId: firstId } });
    expect(await post(url, replayHeaders, first.body)).toMatchObject({ status: 200, json: { status: 'duplicate', eventId: replayId, replayOf: firstId } });
    await expect(stack.client.workflow.getHandle(replayId).describe()).rejects.toThrow(WorkflowNotFoundError);
  },
);

it('github (strict: its flow is chosen by the unsigned X-GitHub-Event): the signed body under a new delivery ID and another event name is a replay', async () => {
  const body = JSON.stringify({
    action: 'opened',
    issue: { number: 1, title: 'A replay' },
    repository: { full_name: 'acme/shop' },
    sender: { login: 'ada' },
    nonce: randomUUID(),
  });
  const first = await githubHeaders(body, SECRETS.github, { delivery: randomUUID(), event: 'issues' });
  const replay = { ...first, 'x-github-delivery': randomUUID(), 'x-github-event': 'pull_request' };
  const url = `${stack.url}/webhooks/github`;
  expect((await post(url, first, body)).status).toBe(202);
  expect(await post(url, replay, body)).toMatchObject({
    status: 200,
    json: { status: 'duplicate', eventId: replay['x-github-delivery'], replayOf: first['x-github-delivery'] },
  });
  await expect(stack.client.workflow.getHandle(replay['x-github-delivery']).describe()).rejects.toThrow(WorkflowNotFoundError);
});
