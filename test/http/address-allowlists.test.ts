import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadReceiverConfig } from '../../src/config';
import { AddressAllowlists } from '../../src/http/address-allowlists';
import { createApp } from '../../src/http/app';
import { createMetrics } from '../../src/http/metrics';
import { silentLogger } from '../../src/core/logger';
import { SourceRegistry } from '../../src/providers/registry';
import { RecordingStarter } from '../support/recording-starter';
import { githubHeaders, SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from '../support/signing';

/**
 * Per-source address allowlists from the providers' published lists (GitHub's meta API `hooks`,
 * Stripe's webhook IPs), read from a stand-in of each endpoint: `count` counts, `enforce` refuses
 * what comes from elsewhere (403, unread), the last good list stays when a read fails, and a list
 * never read answers 503 so the provider retries.
 */
let published: { github: unknown; stripe: unknown; status: number };
let lists: Server;
let listsUrl: string;
beforeAll(async () => {
  lists = createServer((req, res) => {
    const body = req.url === '/meta' ? published.github : published.stripe;
    res.writeHead(published.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => lists.listen(0, '127.0.0.1', resolve));
  listsUrl = `http://127.0.0.1:${(lists.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => lists.close(() => resolve())));

async function receiverWith(allowlists: string) {
  const config = loadReceiverConfig({
    ...SECRETS_ENV,
    ADDRESS_ALLOWLISTS: allowlists,
    GITHUB_ADDRESSES_URL: `${listsUrl}/meta`,
    STRIPE_ADDRESSES_URL: `${listsUrl}/ips_webhooks.json`,
  });
  const metrics = createMetrics();
  const guard = new AddressAllowlists(config.addressAllowlists, { refreshMs: 3_600_000, logger: silentLogger });
  await guard.start();
  const app = createApp({
    sources: new SourceRegistry(config.sources),
    starter: new RecordingStarter(),
    maxBodyBytes: config.maxBodyBytes,
    logger: silentLogger,
    metrics,
    allowlists: guard,
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const port = (server.address() as AddressInfo).port;
  /** A signed delivery to the source, sent from `from` (a loopback address). */
  const send = async (source: 'github' | 'stripe', from: string) => {
    const body = JSON.stringify(source === 'stripe' ? stripeEvent() : { zen: 'ok', hook_id: 1 });
    const headers =
      source === 'stripe' ? stripeHeaders(body, SECRETS.stripe) : await githubHeaders(body, SECRETS.github, { delivery: crypto.randomUUID(), event: 'ping' });
    return new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, localAddress: from, method: 'POST', path: `/webhooks/${source}`, headers }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(body);
    });
  };
  const counted = async () =>
    Object.fromEntries((await metrics.allowlist.get()).values.map((value) => [`${value.labels.source} ${value.labels.verdict}`, value.value]));
  return { send, counted, guard, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

it('enforce: takes deliveries from the published ranges, refuses the rest 403 unread, and keeps the last good list when a read fails', async () => {
  published = { github: { hooks: ['127.0.0.1/32', '2a0a:a440::/29'], web: ['127.0.0.2/32'] }, stripe: { WEBHOOKS: [] }, status: 200 };
  const receiver = await receiverWith('github:enforce');
  try {
    expect(await receiver.send('github', '127.0.0.1')).toBe(202);
    expect(await receiver.send('github', '127.0.0.2')).toBe(403);
    // Another source keeps no list: anyone may deliver, as before.
    expect(await receiver.send('stripe', '127.0.0.2')).toBe(202);
    published.status = 500;
    await receiver.guard.refresh();
    expect(await receiver.send('github', '127.0.0.1')).toBe(202);
    expect(await receiver.send('github', '127.0.0.2')).toBe(403);
    expect(await receiver.counted()).toEqual({ 'github inside': 2, 'github outside': 2 });
  } finally {
    receiver.guard.stop();
    await receiver.close();
  }
});

it('count: takes every delivery and counts where each came from', async () => {
  published = { github: {}, stripe: { WEBHOOKS: ['127.0.0.2', '3.18.12.63'] }, status: 200 };
  const receiver = await receiverWith('stripe:count');
  try {
    expect(await receiver.send('stripe', '127.0.0.1')).toBe(202);
    expect(await receiver.send('stripe', '127.0.0.2')).toBe(202);
    expect(await receiver.counted()).toEqual({ 'stripe inside': 1, 'stripe outside': 1 });
  } finally {
    receiver.guard.stop();
    await receiver.close();
  }
});

it('enforce with no list read yet: 503, so the provider retries and nothing is lost', async () => {
  published = { github: {}, stripe: {}, status: 503 };
  const receiver = await receiverWith('github:enforce');
  try {
    expect(await receiver.send('github', '127.0.0.1')).toBe(503);
    expect(await receiver.counted()).toEqual({ 'github unknown': 1 });
  } finally {
    receiver.guard.stop();
    await receiver.close();
  }
});

it('refuses an allowlist for a kind that publishes no addresses, or a mode it does not know', () => {
  expect(() => loadReceiverConfig({ ...SECRETS_ENV, ADDRESS_ALLOWLISTS: 'standard:enforce' })).toThrow(
    'ADDRESS_ALLOWLISTS: standard-webhooks publishes no list of the addresses it sends from (only stripe and github do).',
  );
  expect(() => loadReceiverConfig({ ...SECRETS_ENV, ADDRESS_ALLOWLISTS: 'github:block' })).toThrow(
    'ADDRESS_ALLOWLISTS: "github:block" must be <source>:count or <source>:enforce, naming a configured source.',
  );
});
