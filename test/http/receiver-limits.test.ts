import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { DEVELOPMENT_ADMIN_TOKEN, loadReceiverConfig } from '../../src/config';
import { UNREACHABLE_DATABASE } from '../support/database';
import { silentLogger } from '../../src/core/logger';
import { startReceiver, type RunningReceiver } from '../../src/receiver';
import { lazyClient } from '../../src/temporal/connection';
import { eventually } from '../support/eventually';
import { SECRETS_ENV } from '../support/signing';

// No request here reaches Temporal or the database: the lazy client never connects.
const client = lazyClient({ namespace: 'default', connectionOptions: { address: '127.0.0.1:1' } });

let receiver: RunningReceiver | undefined;
afterEach(() => receiver?.close());

async function start(env: Record<string, string>) {
  receiver = await startReceiver(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', ...env }), client, silentLogger, UNREACHABLE_DATABASE);
  return Number(new URL(receiver.url).port);
}

/** Opens a connection, and resolves with everything the server sent once it closes the connection. */
function open(port: number): { socket: Socket; closed: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  const closed = new Promise<string>((resolve) => {
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
  });
  return { socket, closed };
}

it('answers 408 and closes the connection of a client that trickles its body past REQUEST_TIMEOUT', async () => {
  const port = await start({ REQUEST_TIMEOUT: '1s' });
  const { socket, closed } = open(port);
  socket.write('POST /webhooks/stripe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n');
  let sent = 0;
  const trickle = setInterval(() => {
    if (!socket.destroyed) socket.write('{', () => sent++);
  }, 100);
  const answer = await closed;
  clearInterval(trickle);
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(sent).toBeLessThan(1000);
});

it('closes a connection that never finishes its headers', async () => {
  const port = await start({ REQUEST_TIMEOUT: '1s' });
  const { socket, closed } = open(port);
  socket.write('POST /webhooks/stripe HTTP/1.1\r\nHost: x\r\n');
  expect(await closed).toMatch(/^HTTP\/1\.1 408 /);
});

it('closes connections beyond MAX_CONNECTIONS as they arrive, and serves again once one is free', async () => {
  const port = await start({ MAX_CONNECTIONS: '2' });
  const held = [open(port), open(port)];
  await Promise.all(held.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));
  await new Promise((resolve) => setImmediate(resolve));
  const refused = open(port);
  expect(await refused.closed).toBe('');

  held[0]!.socket.destroy();
  await held[0]!.closed;
  const healthz = () =>
    fetch(`${receiver!.url}/healthz`, { headers: { connection: 'close' } }).then(
      (response) => response.status,
      () => 0,
    );
  await eventually('a freed connection lets the next one in', async () => (await healthz()) === 200);
  held[1]!.socket.destroy();
});

it("counts large bodies per client address, taking it from X-Forwarded-For only from TRUST_PROXY's proxies", async () => {
  const hold = (port: number, forwardedFor: string) => {
    const { socket, closed } = open(port);
    socket.write(
      `POST /webhooks/stripe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: ${forwardedFor}\r\nContent-Length: 1000\r\n\r\n{`,
    );
    return { socket, closed };
  };
  const send = (port: number, forwardedFor: string) =>
    fetch(`http://127.0.0.1:${port}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: 'x'.repeat(100),
    }).then((response) => response.status);
  const limits = { LARGE_BODY_BYTES: '10', MAX_LARGE_BODIES_PER_ADDRESS: '1' };

  const behindProxy = await start({ ...limits, TRUST_PROXY: 'loopback' });
  const held = hold(behindProxy, '203.0.113.1');
  await eventually('the first sender holds its share', async () => (await send(behindProxy, '203.0.113.1')) === 429);
  // Another client behind the same proxy has its own share: its body is read (and its signature refused).
  expect(await send(behindProxy, '203.0.113.2')).toBe(400);
  held.socket.destroy();
  await receiver!.close();

  const direct = await start(limits);
  const heldDirect = hold(direct, '203.0.113.1');
  // Without TRUST_PROXY the header is the sender's word: both come from 127.0.0.1, one share.
  await eventually('the held body takes the share of 127.0.0.1', async () => (await send(direct, '203.0.113.2')) === 429);
  heldDirect.socket.destroy();
});

it.each([
  ['admin', { ADMIN_TOKEN: 'a-long-enough-admin-token-0123456789abcdef' }, 'a-long-enough-admin-token-0123456789abcdef', '/admin/events/evt_1/verify'],
  ['API', { API_TOKENS: 'shop:a-long-enough-api-token-0123456789abcdef' }, 'a-long-enough-api-token-0123456789abcdef', '/v1/endpoints'],
])('answers 429 to an address after 10 refused %s tokens within a minute, and does not count accepted ones', async (_what, env, token, route) => {
  const port = await start(env);
  const list = (bearer: string) => fetch(`http://127.0.0.1:${port}${route}`, { headers: { authorization: `Bearer ${bearer}` } });
  // Accepted tokens do not count (here the unreachable database answers them 500).
  for (let attempt = 0; attempt < 12; attempt++) expect((await list(token)).status).not.toBe(429);
  const refused: number[] = [];
  for (let attempt = 0; attempt < 10; attempt++) refused.push((await list(`guess-${attempt}`)).status);
  expect(refused).toEqual(Array(10).fill(401));
  const blocked = await list('guess-10');
  expect(blocked.status).toBe(429);
  expect(await blocked.json()).toMatchObject({ type: 'urn:durable-webhooks:problem:too-many-failed-attempts' });
  expect(blocked.headers.get('retry-after')).toBeTruthy();
});

it("listens where the configuration says: npm run dev's receiver on loopback only", async () => {
  receiver = await startReceiver(loadReceiverConfig({ PORT: '0' }, { development: true }), client, silentLogger, UNREACHABLE_DATABASE);
  expect((receiver.server.address() as { address: string }).address).toBe('127.0.0.1');
  await receiver.close();
  await start({});
  expect((receiver.server.address() as { address: string }).address).toBe('::');
});

it('serves /admin, /console and /v1 on ADMIN_PORT only, when it is set, and only the webhooks and health checks on PORT', async () => {
  const adminToken = 'a'.repeat(32);
  await start({ ADMIN_PORT: '0', ADMIN_TOKEN: adminToken, API_TOKENS: `shop:${'b'.repeat(32)}` });
  const { url, adminUrl } = receiver!;
  expect(adminUrl).not.toBe(url);
  // /codec is mounted with them (it needs PAYLOAD_ENCRYPTION_KEYS, which this receiver has not).
  for (const path of ['/admin/events', '/v1/messages']) {
    const response = await fetch(`${url}${path}`, { method: 'POST' });
    expect({ path, status: response.status, type: ((await response.json()) as { type: string }).type }).toEqual({
      path,
      status: 404,
      type: 'urn:durable-webhooks:problem:not-found',
    });
    expect({ path, status: (await fetch(`${adminUrl}${path}`, { method: 'POST' })).status }).toEqual({ path, status: 401 });
  }
  // The console goes with them.
  expect((await fetch(`${url}/console/login`)).status).toBe(404);
  expect((await fetch(`${adminUrl}/console/login`)).status).toBe(200);
  expect((await fetch(`${adminUrl}/webhooks/stripe`, { method: 'POST' })).status).toBe(404);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  expect((await fetch(`${adminUrl}/healthz`)).status).toBe(200);
  expect((await fetch(`${url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(400);
});

it('refuses an ADMIN_TOKEN or CODEC_TOKEN shorter than 32 characters', () => {
  expect(() => loadReceiverConfig({ ADMIN_TOKEN: 'short' })).toThrow('ADMIN_TOKEN must be at least 32 characters (for example: openssl rand -hex 32).');
  expect(() => loadReceiverConfig({ CODEC_TOKEN: 'x'.repeat(31) })).toThrow(/CODEC_TOKEN must be at least 32 characters/);
  expect(loadReceiverConfig({ ADMIN_TOKEN: 'x'.repeat(32), ADMIN_TOKENS: `dpo:${'y'.repeat(40)}` }).adminTokens.map(({ name }) => name)).toEqual([
    'admin',
    'dpo',
  ]);
});

it.each([
  ['declares a body over MAX_BODY_BYTES', '/webhooks/stripe', 'Content-Length: 30000000', /^HTTP\/1\.1 413 /],
  ['sends a compressed body', '/webhooks/stripe', 'Content-Encoding: gzip\r\nContent-Length: 1000', /^HTTP\/1\.1 415 /],
  ['names no source we have', '/webhooks/nobody', 'Content-Length: 1000', /^HTTP\/1\.1 404 /],
])('answers a request that %s at once, unread, and closes its connection instead of waiting for the body', async (_case, path, headers, status) => {
  const port = await start({});
  const { socket, closed } = open(port);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n\r\n`);
  const began = Date.now();
  expect(await closed).toMatch(status);
  expect(Date.now() - began).toBeLessThan(2_000);
});

it('under npm run dev on loopback, answers 421 to a request whose Host names another machine (a name rebound to 127.0.0.1)', async () => {
  receiver = await startReceiver(
    loadReceiverConfig({ PORT: '0', RECEIVER_METRICS_ADDRESS: '' }, { development: true, developmentAdminToken: true }),
    client,
    silentLogger,
    UNREACHABLE_DATABASE,
  );
  const port = Number(new URL(receiver.url).port);
  const statusFor = (host: string, path = '/admin/events') =>
    new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers: { host, authorization: `Bearer ${DEVELOPMENT_ADMIN_TOKEN}` } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
  expect(await statusFor('rebound.example:3000')).toBe(421);
  expect(await statusFor('rebound.example', '/healthz')).toBe(421);
  expect(await statusFor('127.0.0.1.nip.example')).toBe(421);
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'app.localhost']) expect(await statusFor(host, '/healthz')).toBe(200);
});

it("warns at start when the operators' routes share the webhook port, and not when ADMIN_PORT moves them", async () => {
  const warnings: string[] = [];
  const logger = { ...silentLogger, warn: (...args: unknown[]) => void warnings.push(String(args.at(-1))) } as typeof silentLogger;
  const env = { ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN: 'a'.repeat(40) };
  receiver = await startReceiver(loadReceiverConfig(env), client, logger, UNREACHABLE_DATABASE);
  expect(warnings.filter((line) => line.includes('share the webhook port'))).toHaveLength(1);
  await receiver.close();
  warnings.length = 0;
  receiver = await startReceiver(loadReceiverConfig({ ...env, ADMIN_PORT: '0' }), client, logger, UNREACHABLE_DATABASE);
  expect(warnings.filter((line) => line.includes('share the webhook port'))).toEqual([]);
});
