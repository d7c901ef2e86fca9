import { DEVELOPMENT_ADMIN_TOKEN, loadReceiverConfig } from '../../src/config';
import { silentLogger } from '../../src/core/logger';
import { startReceiver, type RunningReceiver } from '../../src/receiver';
import { lazyClient } from '../../src/temporal/connection';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { SECRETS, SECRETS_ENV, stripeEvent, stripeHeaders } from '../support/signing';
import { createHold, releaseHolds } from '../../src/db/holds';
import { runCli } from '../support/processes';

/**
 * The console's doors, over HTTP: sign-in and its limit, the session cookie's flags, the
 * Content-Security-Policy, CSRF and cross-site POSTs, sign-out, and the console off. Pages that
 * need only PostgreSQL; the lazy Temporal client never connects.
 */
const client = lazyClient({ namespace: 'default', connectionOptions: { address: '127.0.0.1:1' } });
const ADMIN_TOKEN = 'console-security-admin-0123456789abcdef01234567';
let db: TestDatabase;
let receiver: RunningReceiver;

beforeAll(async () => {
  db = await openTestDatabase();
  receiver = await startReceiver(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN }), client, silentLogger, db);
});
afterAll(async () => {
  await receiver.close();
  await db.drop();
});

const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
  method: 'POST',
  redirect: 'manual' as const,
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  body: new URLSearchParams(fields).toString(),
});

async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(`${receiver.url}/console/login`, form({ token: ADMIN_TOKEN }));
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!;
  const page = await (await fetch(`${receiver.url}/console`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1]! };
}

it('sends a strict Content-Security-Policy and no framing, and redirects a request without a session to sign in', async () => {
  const response = await fetch(`${receiver.url}/console/events`, { redirect: 'manual' });
  expect(response.status).toBe(303);
  expect(response.headers.get('location')).toBe('/console/login');
  const csp = response.headers.get('content-security-policy')!;
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(response.headers.get('cache-control')).toBe('no-store');
});

it('exchanges a token for an HttpOnly, SameSite=Strict session cookie on /console, and refuses a wrong one', async () => {
  expect((await fetch(`${receiver.url}/console/login`, form({ token: 'x'.repeat(40) }))).status).toBe(401);
  const response = await fetch(`${receiver.url}/console/login`, form({ token: ADMIN_TOKEN }));
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie')!;
  expect(cookie).toMatch(/^dw_console=[\w-]{43};/);
  expect(cookie).toContain('HttpOnly');
  expect(cookie).toContain('SameSite=Strict');
  expect(cookie).toContain('Path=/console');
  // The session is stored by its hash only.
  const { rows } = await db.query<{ id_sha256: string }>('SELECT id_sha256 FROM console_sessions');
  expect(rows.map((row) => row.id_sha256)).not.toContain(cookie.split(';')[0]!.split('=')[1]);
});

it('refuses a POST without the CSRF token, or from another site, and ends the session on sign-out', async () => {
  const { cookie, csrf } = await signIn();
  const retry = `${receiver.url}/console/failures/0123456789abcdef/retry`;
  expect((await fetch(retry, form({ reason: 'x' }, { cookie }))).status).toBe(403);
  expect((await fetch(retry, form({ reason: 'x', _csrf: 'another-sessions-token' }, { cookie }))).status).toBe(403);
  expect((await fetch(retry, form({ reason: 'x', _csrf: csrf }, { cookie, 'sec-fetch-site': 'cross-site' }))).status).toBe(403);
  expect((await fetch(retry, form({ reason: 'x', _csrf: csrf }, { cookie, origin: 'https://evil.example' }))).status).toBe(403);
  // Login CSRF: a sign-in posted from another site's page (its Origin) is refused too, even with a right token.
  expect((await fetch(`${receiver.url}/console/login`, form({ token: ADMIN_TOKEN }, { origin: 'https://evil.example' }))).status).toBe(403);
  expect((await fetch(`${receiver.url}/console/login`, form({ token: ADMIN_TOKEN }, { origin: 'null' }))).status).toBe(403);
  expect((await fetch(`${receiver.url}/console/login`, form({ token: ADMIN_TOKEN }, { origin: new URL(receiver.url).origin }))).status).toBe(303);
  // With both, the request reaches the route: no such group.
  expect((await fetch(retry, form({ reason: 'x', _csrf: csrf }, { cookie }))).status).toBe(404);

  expect((await fetch(`${receiver.url}/console/logout`, form({ _csrf: csrf }, { cookie }))).status).toBe(303);
  expect((await fetch(`${receiver.url}/console`, { headers: { cookie }, redirect: 'manual' })).status).toBe(303);
});

it('counts only failed sign-ins: ten wrong tokens from one address, then the right one signs in, and an eleventh wrong one gets 429', async () => {
  // A receiver of its own: its count of failures is its own.
  const guarded = await startReceiver(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN }), client, silentLogger, db);
  try {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 10; attempt++)
      statuses.push((await fetch(`${guarded.url}/console/login`, form({ token: `wrong-${attempt}`.padEnd(40, 'x') }))).status);
    expect(statuses).toEqual(Array(10).fill(401));
    const right = await fetch(`${guarded.url}/console/login`, form({ token: ADMIN_TOKEN }));
    expect(right.status).toBe(303);
    expect(right.headers.get('set-cookie')).toMatch(/^dw_console=[\w-]{43};/);
    expect((await fetch(`${guarded.url}/console/login`, form({ token: 'wrong-again'.padEnd(40, 'x') }))).status).toBe(429);
  } finally {
    await guarded.close();
  }
});

it('ends the sessions of a token that is removed or given another role: at the next request, and at start', async () => {
  const VIEWER = `oncall:${'v'.repeat(40)}`;
  const start = (env: Record<string, string>) =>
    startReceiver(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN, ...env }), client, silentLogger, db);
  const signInAs = async (url: string, token: string) => {
    const response = await fetch(`${url}/console/login`, form({ token }));
    expect(response.status).toBe(303);
    return response.headers.get('set-cookie')!.split(';')[0]!;
  };
  const page = (url: string, cookie: string) => fetch(`${url}/console/events`, { headers: { cookie }, redirect: 'manual' });
  const sessionsOf = async (name: string) => (await db.query<{ role: string }>('SELECT role FROM console_sessions WHERE token_name = $1', [name])).rows;

  // Signed in as a viewer; the receiver restarts without that viewer.
  const first = await start({ VIEWER_TOKENS: VIEWER });
  const cookie = await signInAs(first.url, 'v'.repeat(40));
  expect((await page(first.url, cookie)).status).toBe(200);
  await first.close();
  const without = await start({});
  try {
    expect(await sessionsOf('oncall')).toEqual([]);
    const response = await page(without.url, cookie);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/login');
  } finally {
    await without.close();
  }

  // A receiver on which the same token is an admin one, already running when the viewer signs in
  // elsewhere: the viewer's session is not an admin's, there or anywhere after.
  const promoted = await start({ ADMIN_TOKENS: `oncall:${'v'.repeat(40)}` });
  const viewerReceiver = await start({ VIEWER_TOKENS: VIEWER });
  try {
    const viewerCookie = await signInAs(viewerReceiver.url, 'v'.repeat(40));
    expect(await sessionsOf('oncall')).toEqual([{ role: 'viewer' }]);
    expect((await page(promoted.url, viewerCookie)).status).toBe(303);
    expect(await sessionsOf('oncall')).toEqual([]);
  } finally {
    await viewerReceiver.close();
    await promoted.close();
  }
});

it("shows a refused delivery's client address to an admin and masks it for a viewer", async () => {
  const viewer = 'w'.repeat(40);
  const shared = await startReceiver(
    loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN, VIEWER_TOKENS: `oncall:${viewer}` }),
    client,
    silentLogger,
    db,
  );
  try {
    await db.query(
      `INSERT INTO refused_deliveries (source, path, status, reason, detail, client, header_names) VALUES ('stripe', '/webhooks/stripe', 400, 'invalid-signature', 'masked?', '203.0.113.77', '{}')`,
    );
    const refusedPage = async (token: string) => {
      const signIn = await fetch(`${shared.url}/console/login`, form({ token }));
      return (await fetch(`${shared.url}/console/refused`, { headers: { cookie: signIn.headers.get('set-cookie')!.split(';')[0]! } })).text();
    };
    expect(await refusedPage(ADMIN_TOKEN)).toContain('203.0.113.77');
    const asViewer = await refusedPage(viewer);
    expect(asViewer).toContain('masked?');
    expect(asViewer).not.toContain('203.0.113.77');
  } finally {
    await shared.close();
  }
});

it("shows during a rotation how many deliveries each source's previous secret still signs", async () => {
  // A database of its own: its deliveries wait unstarted (Temporal is away), and no other test's counts should see them.
  const own = await openTestDatabase();
  const rotating = await startReceiver(loadReceiverConfig({ ...SECRETS_ENV, PORT: '0', RECEIVER_METRICS_ADDRESS: '', ADMIN_TOKEN }), client, silentLogger, own);
  try {
    const overview = async () => {
      const signIn = await fetch(`${rotating.url}/console/login`, form({ token: ADMIN_TOKEN }));
      return (await fetch(`${rotating.url}/console`, { headers: { cookie: signIn.headers.get('set-cookie')!.split(';')[0]! } })).text();
    };
    const send = async (secret: string) => {
      const body = JSON.stringify(stripeEvent());
      expect((await fetch(`${rotating.url}/webhooks/stripe`, { method: 'POST', headers: stripeHeaders(body, secret), body })).status).toBe(202);
    };
    await send(SECRETS.stripe);
    expect(await overview()).not.toContain('during a rotation');
    await send(SECRETS.stripeRotated);
    await send(SECRETS.stripe);
    const page = await overview();
    expect(page).toContain('Signing secrets in use during a rotation');
    expect(page).toMatch(/<td>stripe<\/td><td class="number">2<\/td><td class="number">1<\/td>/);
  } finally {
    await rotating.close();
    await own.drop();
  }
});

it('lists the console sessions by token name and role, and revokes those of one name, from the CLI', async () => {
  const { cookie } = await signIn();
  const env = { DATABASE_URL: db.url };
  const listed = await runCli(['console', 'sessions', 'list', '--json'], env);
  expect(listed.code).toBe(0);
  const { sessions } = JSON.parse(listed.output) as { sessions: Array<{ tokenName: string; role: string }> };
  expect(sessions).toEqual(expect.arrayContaining([expect.objectContaining({ tokenName: 'admin', role: 'admin' })]));
  expect(listed.output).not.toContain(cookie.split('=')[1]);
  expect(listed.output).not.toContain(ADMIN_TOKEN);

  expect(await runCli(['console', 'sessions', 'revoke'], env)).toMatchObject({ code: 1, error: expect.stringContaining('--all, or --name') });
  const revoked = await runCli(['console', 'sessions', 'revoke', '--name', 'admin', '--json'], env);
  expect(JSON.parse(revoked.output)).toEqual({ revoked: sessions.filter((session) => session.tokenName === 'admin').length });
  expect((await fetch(`${receiver.url}/console/events`, { headers: { cookie }, redirect: 'manual' })).status).toBe(303);
});

it('is off with CONSOLE=off, and without any admin or viewer token but under npm run dev', () => {
  expect(loadReceiverConfig({ ...SECRETS_ENV, ADMIN_TOKEN, CONSOLE: 'off' }).console.enabled).toBe(false);
  expect(loadReceiverConfig({ ...SECRETS_ENV }).console.enabled).toBe(false);
  expect(loadReceiverConfig({ ...SECRETS_ENV, VIEWER_TOKENS: `oncall:${'v'.repeat(40)}` }).console.enabled).toBe(true);
  expect(() => loadReceiverConfig({ ...SECRETS_ENV, ADMIN_TOKEN, VIEWER_TOKENS: `oncall:${ADMIN_TOKEN}` })).toThrow(
    'VIEWER_TOKENS lists a token that is also an admin token.',
  );
  // `npm run dev` alone signs in with the public development token when none is set.
  expect(loadReceiverConfig({}, { development: true }).console.enabled).toBe(false);
  expect(loadReceiverConfig({}, { development: true, developmentAdminToken: true }).adminTokens).toEqual([{ name: 'admin', token: DEVELOPMENT_ADMIN_TOKEN }]);
});

it('shows a held delivery of a receiver that acknowledges at commit, with its stored delivery, while Temporal is away', async () => {
  const hold = await createHold(db, { source: 'stripe', reason: 'downstream outage', by: 'test' });
  const body = JSON.stringify(stripeEvent({ type: 'invoice.paid' }));
  const id = (JSON.parse(body) as { id: string }).id;
  const answer = await fetch(`${receiver.url}/webhooks/stripe`, { method: 'POST', headers: stripeHeaders(body, SECRETS.stripe), body });
  expect({ status: answer.status, body: await answer.json() }).toMatchObject({ status: 202, body: { status: 'held' } });
  const { cookie } = await signIn();
  const list = await (await fetch(`${receiver.url}/console/events?status=held`, { headers: { cookie } })).text();
  expect(list).toMatch(new RegExp(`${id}</a>.*held`, 's'));
  const page = await (await fetch(`${receiver.url}/console/events/${id}`, { headers: { cookie } })).text();
  expect(page).toContain('invoice.paid');
  expect(page).toContain('stripe-signature');
  expect(page).toContain('Temporal could not be asked');
  const overview = await (await fetch(`${receiver.url}/console`, { headers: { cookie } })).text();
  expect(overview).toMatch(/tile-value">1<\/span><span class="tile-label">Held/);
  await releaseHolds(db, { id: hold.id }, { by: 'test' });
});
