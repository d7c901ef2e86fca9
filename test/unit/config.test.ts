import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_BODY_BYTES, loadCommonConfig, loadReceiverConfig, loadWorkerConfig } from '../../src/config';
import { DEVELOPMENT_SECRETS } from '../../src/config/sources';
import { CATALOG_SECRETS_ENV, SECRETS_ENV } from '../support/signing';

const writeConfig = (text: string, name = 'webhooks.yaml') => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-config-')), name);
  writeFileSync(file, text);
  return file;
};

describe('loadReceiverConfig', () => {
  it('in development, runs with no settings: port 3000, task queue webhooks, 25 MiB bodies, a built-in source of every kind on its development secret', () => {
    const config = loadReceiverConfig({}, { development: true });
    expect(config).toMatchObject({ port: 3000, taskQueue: 'webhooks', maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    expect(config.sources.map((source) => [source.name, source.kind, [...source.secrets, ...source.publicKeys], source.url])).toEqual([
      ['stripe', 'stripe', [DEVELOPMENT_SECRETS.STRIPE_WEBHOOK_SECRET], undefined],
      ['github', 'github', [DEVELOPMENT_SECRETS.GITHUB_WEBHOOK_SECRET], undefined],
      ['standard', 'standard-webhooks', [DEVELOPMENT_SECRETS.STANDARD_WEBHOOK_SECRET], undefined],
      ['svix', 'svix', [DEVELOPMENT_SECRETS.SVIX_WEBHOOK_SECRET], undefined],
      ['shopify', 'shopify', [DEVELOPMENT_SECRETS.SHOPIFY_WEBHOOK_SECRET], undefined],
      ['paddle', 'paddle', [DEVELOPMENT_SECRETS.PADDLE_WEBHOOK_SECRET], undefined],
      ['square', 'square', [DEVELOPMENT_SECRETS.SQUARE_WEBHOOK_SIGNATURE_KEY], 'http://localhost:3000/webhooks/square'],
      ['slack', 'slack', [DEVELOPMENT_SECRETS.SLACK_SIGNING_SECRET], undefined],
      ['linear', 'linear', [DEVELOPMENT_SECRETS.LINEAR_WEBHOOK_SECRET], undefined],
      ['twilio', 'twilio', [DEVELOPMENT_SECRETS.TWILIO_AUTH_TOKEN], 'http://localhost:3000/webhooks/twilio'],
      ['sendgrid', 'sendgrid', [DEVELOPMENT_SECRETS.SENDGRID_WEBHOOK_PUBLIC_KEY], undefined],
      ['adyen', 'adyen', [DEVELOPMENT_SECRETS.ADYEN_HMAC_KEY], undefined],
    ]);
    expect(config.developmentSecrets.map((secret) => secret.env).sort()).toEqual(
      [...Object.keys(DEVELOPMENT_SECRETS), 'SQUARE_WEBHOOK_URL', 'TWILIO_WEBHOOK_URL'].sort(),
    );
  });

  it('needs the public URL Square and Twilio sign once their secret is set, as an absolute http(s) URL', () => {
    expect(() => loadReceiverConfig({ SQUARE_WEBHOOK_SIGNATURE_KEY: 'key' })).toThrow(
      'SQUARE_WEBHOOK_SIGNATURE_KEY is set, so SQUARE_WEBHOOK_URL must be too: square signs the public URL it posts to.',
    );
    expect(() => loadReceiverConfig({ TWILIO_AUTH_TOKEN: 'token', TWILIO_WEBHOOK_URL: '/webhooks/twilio' })).toThrow(
      /TWILIO_WEBHOOK_URL must be the absolute http\(s\) URL/,
    );
    const config = loadReceiverConfig({ TWILIO_AUTH_TOKEN: 'token', TWILIO_WEBHOOK_URL: 'https://hooks.example.com/webhooks/twilio?x=1' });
    expect(config.sources).toEqual([expect.objectContaining({ name: 'twilio', url: 'https://hooks.example.com/webhooks/twilio?x=1', secrets: ['token'] })]);
  });

  it('reads SENDGRID_WEBHOOK_PUBLIC_KEY as a verification key, not a secret', () => {
    const config = loadReceiverConfig({ SENDGRID_WEBHOOK_PUBLIC_KEY: 'MFkw_key' });
    expect(config.sources).toEqual([expect.objectContaining({ name: 'sendgrid', kind: 'sendgrid', secrets: [], publicKeys: ['MFkw_key'] })]);
  });

  it('takes each secret whole, and the previous one from <NAME>_PREVIOUS during a rotation', () => {
    const config = loadReceiverConfig(
      { STRIPE_WEBHOOK_SECRET: 'whsec_new', STRIPE_WEBHOOK_SECRET_PREVIOUS: 'whsec_old', GITHUB_WEBHOOK_SECRET: 'correct horse battery, staple' },
      { development: true },
    );
    expect(config.sources[0]!.secrets).toEqual(['whsec_new', 'whsec_old']);
    expect(config.sources[1]!.secrets).toEqual(['correct horse battery, staple']);
    expect(config.developmentSecrets.map((secret) => secret.env)).not.toContain('STRIPE_WEBHOOK_SECRET');
    expect(config.developmentSecrets.map((secret) => secret.env)).toContain('STANDARD_WEBHOOK_SECRET');
  });

  it.each([
    ['STRIPE_WEBHOOK_SECRET', 'whsec_new whsec_old'],
    ['STANDARD_WEBHOOK_SECRET', 'whsec_bmV3,whsec_b2xk'],
    ['STANDARD_WEBHOOK_PUBLIC_KEY', 'whpk_a whpk_b'],
  ])('refuses a list in %s, which cannot be one secret, and names the _PREVIOUS variable', (name, value) => {
    expect(() => loadReceiverConfig({ [name]: value })).toThrow(`${name} holds one value; during a rotation, put the previous one in ${name}_PREVIOUS.`);
  });

  it("acknowledges at commit by default in production and at Temporal's confirmation under npm run dev, and refuses any other ACKNOWLEDGE", () => {
    expect(loadReceiverConfig({}).acknowledge).toBe('database');
    expect(loadReceiverConfig({}, { development: true }).acknowledge).toBe('temporal');
    expect(loadReceiverConfig({ ACKNOWLEDGE: 'temporal' }).acknowledge).toBe('temporal');
    expect(loadReceiverConfig({ ACKNOWLEDGE: 'database' }, { development: true }).acknowledge).toBe('database');
    expect(() => loadReceiverConfig({ ACKNOWLEDGE: 'disk' })).toThrow(/ACKNOWLEDGE/);
  });

  it.each([[undefined], ['development'], ['test'], ['production']])(
    'outside development (NODE_ENV=%s), leaves a source off when its secret is unset instead of using a development value',
    (nodeEnv) => {
      const config = loadReceiverConfig({ NODE_ENV: nodeEnv, STRIPE_WEBHOOK_SECRET: 'whsec_live' });
      expect(config.sources.map((source) => source.name)).toEqual(['stripe']);
      expect(config.disabledSources).toEqual([
        { name: 'github', env: 'GITHUB_WEBHOOK_SECRET' },
        { name: 'standard', env: 'STANDARD_WEBHOOK_SECRET' },
        { name: 'svix', env: 'SVIX_WEBHOOK_SECRET' },
        { name: 'shopify', env: 'SHOPIFY_WEBHOOK_SECRET' },
        { name: 'paddle', env: 'PADDLE_WEBHOOK_SECRET' },
        { name: 'square', env: 'SQUARE_WEBHOOK_SIGNATURE_KEY' },
        { name: 'slack', env: 'SLACK_SIGNING_SECRET' },
        { name: 'linear', env: 'LINEAR_WEBHOOK_SECRET' },
        { name: 'twilio', env: 'TWILIO_AUTH_TOKEN' },
        { name: 'sendgrid', env: 'SENDGRID_WEBHOOK_PUBLIC_KEY' },
        { name: 'adyen', env: 'ADYEN_HMAC_KEY' },
      ]);
      expect(config.developmentSecrets).toEqual([]);
      expect(JSON.stringify(config)).not.toContain(DEVELOPMENT_SECRETS.STRIPE_WEBHOOK_SECRET!.slice(6));
    },
  );

  it('listens on loopback in development, whose secrets are public, and on every interface otherwise, unless HOST says', () => {
    expect(loadReceiverConfig({}, { development: true }).host).toBe('127.0.0.1');
    expect(loadReceiverConfig({}).host).toBeUndefined();
  });

  it('refuses a HOST beyond loopback in development while any of its values is public, and answers only loopback Hosts on loopback', () => {
    expect(() => loadReceiverConfig({ HOST: '0.0.0.0' }, { development: true, developmentAdminToken: true })).toThrow(
      /HOST=0\.0\.0\.0 would let other machines reach npm run dev.*set ADMIN_TOKEN and STRIPE_WEBHOOK_SECRET, /,
    );
    expect(() => loadReceiverConfig({ ...SECRETS_ENV, ...CATALOG_SECRETS_ENV, HOST: '0.0.0.0' }, { development: true, developmentAdminToken: true })).toThrow(
      /set ADMIN_TOKEN and every source secret/,
    );
    const everything = { ...SECRETS_ENV, ...CATALOG_SECRETS_ENV, ADMIN_TOKEN: 'a'.repeat(40), HOST: '0.0.0.0' };
    expect(loadReceiverConfig(everything, { development: true, developmentAdminToken: true })).toMatchObject({ host: '0.0.0.0', loopbackHostsOnly: false });
    expect(loadReceiverConfig({}, { development: true })).toMatchObject({ host: '127.0.0.1', loopbackHostsOnly: true });
    expect(loadReceiverConfig({ HOST: '0.0.0.0' })).toMatchObject({ loopbackHostsOnly: false });
  });

  it('reads API_TOKENS as named scopes: two tokens may share one (rotation)', () => {
    expect(
      loadReceiverConfig({
        API_TOKENS: 'shop:tok_new_0123456789abcdef0123456789 shop:tok_old_0123456789abcdef0123456789,billing:tok:with:colons:0123456789abcdef0123456789',
      }).apiTokens,
    ).toEqual([
      { scope: 'shop', token: 'tok_new_0123456789abcdef0123456789' },
      { scope: 'shop', token: 'tok_old_0123456789abcdef0123456789' },
      { scope: 'billing', token: 'tok:with:colons:0123456789abcdef0123456789' },
    ]);
  });

  it.each([['tok_without_scope'], ['Shop:tok_1'], ['shop:'], ['shop:tok_1 other:tok_1']])('refuses API_TOKENS=%s', (value) => {
    expect(() => loadReceiverConfig({ API_TOKENS: value })).toThrow(/API_TOKENS/);
  });

  it('refuses an API token shorter than 32 characters, as it does an admin token', () => {
    expect(() => loadReceiverConfig({ API_TOKENS: 'shop:a' })).toThrow(
      'API_TOKENS\' token for the scope "shop" must be at least 32 characters (for example: openssl rand -hex 32).',
    );
  });

  it('outside development, has no source at all when no secret is set', () => {
    expect(loadReceiverConfig({}).sources).toEqual([]);
  });

  it('outside development, the worker refuses to capture email to files', () => {
    expect(() => loadWorkerConfig({ NODE_ENV: 'development' })).toThrow('EMAIL_PROVIDER must be resend or smtp, not "".');
    expect(() => loadWorkerConfig({ EMAIL_PROVIDER: 'capture' })).toThrow('EMAIL_PROVIDER must be resend or smtp, not "capture".');
    expect(loadWorkerConfig({}, { development: true }).email.provider).toBe('capture');
  });

  it('gives declined orders PAYMENT_RETRY_WINDOW to be retried: 7 days unless set, and never a non-duration', () => {
    expect(loadWorkerConfig({}, { development: true }).settings.paymentRetryWindowMs).toBe(7 * 24 * 3600 * 1000);
    expect(loadWorkerConfig({ PAYMENT_RETRY_WINDOW: '36h' }, { development: true }).settings.paymentRetryWindowMs).toBe(36 * 3600 * 1000);
    expect(() => loadWorkerConfig({ PAYMENT_RETRY_WINDOW: 'a week' }, { development: true })).toThrow(
      'PAYMENT_RETRY_WINDOW must be a positive duration such as 30s, not "a week".',
    );
  });

  it('keeps bodies BODY_RETENTION (30 days) and duplicate-finding rows DEDUPE_RETENTION (400 days), either forever on request, never rows shorter than bodies', () => {
    const retention = (env: NodeJS.ProcessEnv) => loadWorkerConfig(env, { development: true }).retention;
    const day = 24 * 3600 * 1000;
    expect(retention({})).toEqual({ bodyMs: 30 * day, dedupeMs: 400 * day });
    expect(retention({ BODY_RETENTION: '7d', DEDUPE_RETENTION: 'Forever' })).toEqual({ bodyMs: 7 * day, dedupeMs: null });
    expect(retention({ BODY_RETENTION: 'forever', DEDUPE_RETENTION: 'forever' })).toEqual({ bodyMs: null, dedupeMs: null });
    expect(() => retention({ BODY_RETENTION: 'a month' })).toThrow('BODY_RETENTION must be a positive duration such as 30d, or forever, not "a month".');
    expect(() => retention({ BODY_RETENTION: '0s' })).toThrow('BODY_RETENTION must be a positive duration');
    expect(() => retention({ BODY_RETENTION: '90d', DEDUPE_RETENTION: '60d' })).toThrow('DEDUPE_RETENTION must be at least BODY_RETENTION');
    expect(() => retention({ BODY_RETENTION: 'forever' })).toThrow('DEDUPE_RETENTION must be at least BODY_RETENTION');
  });

  it('versions the worker only with WORKER_BUILD_ID, as that build of WORKER_DEPLOYMENT_NAME (durable-webhooks unless set)', () => {
    const worker = (env: NodeJS.ProcessEnv) => loadWorkerConfig(env, { development: true }).deployment;
    expect(worker({})).toBeUndefined();
    expect(worker({ WORKER_BUILD_ID: '1.4.2' })).toEqual({ name: 'durable-webhooks', buildId: '1.4.2' });
    expect(worker({ WORKER_BUILD_ID: 'sha-3f9c2e1', WORKER_DEPLOYMENT_NAME: 'billing-webhooks' })).toEqual({
      name: 'billing-webhooks',
      buildId: 'sha-3f9c2e1',
    });
    expect(() => worker({ WORKER_DEPLOYMENT_NAME: 'billing-webhooks' })).toThrow('WORKER_DEPLOYMENT_NAME needs WORKER_BUILD_ID');
    expect(() => worker({ WORKER_BUILD_ID: '1.4.2', WORKER_DEPLOYMENT_NAME: 'billing.webhooks' })).toThrow(/WORKER_DEPLOYMENT_NAME must be .* \(no dot/);
    expect(() => worker({ WORKER_BUILD_ID: 'main branch' })).toThrow(
      'WORKER_BUILD_ID must be letters, digits, ".", "+", "-" and "_" (an image tag or a commit, say), not "main branch".',
    );
  });

  it('keeps a Standard Webhooks source with only a public key', () => {
    const config = loadReceiverConfig({ STANDARD_WEBHOOK_PUBLIC_KEY: 'whpk_abc' });
    expect(config.sources).toEqual([{ name: 'standard', kind: 'standard-webhooks', secrets: [], publicKeys: ['whpk_abc'], workflowIdPrefix: '' }]);
  });

  it.each([
    ['PORT', 'eighty', /PORT must be a port number \(0-65535\), not "eighty"/],
    ['PORT', '70000', /PORT must be a port number/],
    ['MAX_BODY_BYTES', '-1', /MAX_BODY_BYTES must be a positive integer, not "-1"/],
    ['MAX_BODY_BYTES', '1.5', /MAX_BODY_BYTES must be a positive integer/],
    ['REQUEST_TIMEOUT', '0s', /REQUEST_TIMEOUT must be a positive duration such as 30s, not "0s"/],
    ['REQUEST_TIMEOUT', 'soon', /REQUEST_TIMEOUT must be a positive duration such as 30s, not "soon"/],
    ['MAX_CONNECTIONS', '0', /MAX_CONNECTIONS must be a positive integer, not "0"/],
    ['MIN_BODY_RATE', 'fast', /MIN_BODY_RATE must be a positive integer, not "fast"/],
    ['MAX_LARGE_BODIES_PER_ADDRESS', '0', /MAX_LARGE_BODIES_PER_ADDRESS must be a positive integer/],
    ['TRUST_PROXY', 'true', /TRUST_PROXY lists "true"; give a number of hops, or addresses and subnets/],
    ['TRUST_PROXY', '10.0.0.0/8, example.com', /TRUST_PROXY lists "example.com"/],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => loadReceiverConfig({ [name]: value })).toThrow(message);
  });

  it("gives one address a quarter of the large-body slots by default, and reads TRUST_PROXY as Express's trust proxy", () => {
    expect(loadReceiverConfig({})).toMatchObject({ maxLargeBodiesPerAddress: 2, minBodyRate: 16384, trustProxy: undefined });
    expect(loadReceiverConfig({ MAX_LARGE_BODIES_IN_FLIGHT: '10' }).maxLargeBodiesPerAddress).toBe(3);
    expect(loadReceiverConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadReceiverConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8 fd00::/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8']);
  });

  it('adds sources from WEBHOOKS_CONFIG, with secrets inline or from a named variable, and a workflow-ID prefix', () => {
    const file = writeConfig(`
sources:
  - name: stripe-connect
    kind: stripe
    secretEnv: [CONNECT_SECRET, CONNECT_SECRET_OLD]
    workflowIdPrefix: "connect:"
  - name: partner
    kind: standard-webhooks
    secret: whsec_cGFydG5lcg==
  - name: gh-enterprise
    kind: github
    secret: ["two words", "a,b"]
`);
    const config = loadReceiverConfig({ WEBHOOKS_CONFIG: file, CONNECT_SECRET: 'whsec_a', CONNECT_SECRET_OLD: 'whsec_b' });
    expect(config.sources).toEqual([
      { name: 'stripe-connect', kind: 'stripe', secrets: ['whsec_a', 'whsec_b'], publicKeys: [], workflowIdPrefix: 'connect:' },
      { name: 'partner', kind: 'standard-webhooks', secrets: ['whsec_cGFydG5lcg=='], publicKeys: [], workflowIdPrefix: '' },
      { name: 'gh-enterprise', kind: 'github', secrets: ['two words', 'a,b'], publicKeys: [], workflowIdPrefix: '' },
    ]);
  });

  it("reads a source's routes, and stops on a flow that does not exist, naming its line", () => {
    const file = writeConfig(
      'sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_x\n    routes:\n      invoice.paid: notifyGitHub\n      "customer.*": recordEvent\n',
    );
    const [billing] = loadReceiverConfig({ WEBHOOKS_CONFIG: file }).sources;
    expect(billing!.routes).toEqual({ 'invoice.paid': 'notifyGitHub', 'customer.*': 'recordEvent' });
    const unknown = writeConfig('sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_x\n    routes: { invoice.paid: notifyFinance }\n');
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: unknown })).toThrow(
      `WEBHOOKS_CONFIG (${unknown}) line 5: source "billing" routes: "invoice.paid" names the flow "notifyFinance", which does not exist; use one of`,
    );
    const list = writeConfig('sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_x\n    routes: [recordEvent]\n');
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: list })).toThrow(/line 5: source "billing" routes: must map event types to a flow's name/);
  });

  it("reads a route's subscribers and compiles their filters, and stops on a filter that does not compile, naming the source and the route", () => {
    const routes = '    routes:\n      invoice.paid:\n        - recordEvent\n        - flow: notifyGitHub\n          if: FILTER\n';
    const source = 'sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_x\n';
    const [billing] = loadReceiverConfig({ WEBHOOKS_CONFIG: writeConfig(source + routes.replace('FILTER', 'body.data.object.amount_paid > 1000')) }).sources;
    expect(billing!.routes).toEqual({ 'invoice.paid': ['recordEvent', { flow: 'notifyGitHub', if: 'body.data.object.amount_paid > 1000' }] });
    const bad = writeConfig(source + routes.replace('FILTER', 'body.data.object.amount_paid >'));
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: bad })).toThrow(
      `WEBHOOKS_CONFIG (${bad}) line 6: source "billing" routes: "invoice.paid" → notifyGitHub: the filter is not a CEL expression over body and event:`,
    );
    const misspelt = writeConfig(source + routes.replace('if: FILTER', 'when: body.paid'));
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: misspelt })).toThrow(/source "billing" routes: must map event types .* \{ flow, if \}/);
  });

  it("reads a source's standing rate per second or per minute, and stops on one that is not a positive rate", () => {
    const rates = ['50/s', '600/m', 12].map(
      (rate) =>
        loadReceiverConfig({ WEBHOOKS_CONFIG: writeConfig(`sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_x\n    rate: ${rate}\n`) })
          .sources[0]!.rate,
    );
    expect(rates).toEqual([50, 10, 12]);
    for (const bad of ['0/s', 'fast', '-3', '5/h']) {
      const file = writeConfig(`sources:\n  - name: billing\n    kind: stripe\n    secret: whsec_x\n    rate: "${bad}"\n`);
      expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: file })).toThrow(
        'WEBHOOKS_CONFIG sources[0] (billing): "rate" must be a positive rate of starts, such as 50/s or 600/m.',
      );
    }
  });

  it('reads a JSON WEBHOOKS_CONFIG too', () => {
    const file = writeConfig(JSON.stringify({ sources: [{ name: 'gh-enterprise', kind: 'github', secret: 's3cret' }] }), 'webhooks.json');
    expect(loadReceiverConfig({ WEBHOOKS_CONFIG: file }).sources[0]).toMatchObject({ name: 'gh-enterprise', kind: 'github', secrets: ['s3cret'] });
  });

  it.each([
    ['no sources list', 'sources: 3', /must have a "sources" list/],
    ['a bad name', 'sources: [{ name: "Bad Name", kind: github, secret: x }]', /"name" must be lower-case/],
    [
      'an unknown kind',
      'sources: [{ name: shop, kind: shopfiy, secret: x }]',
      /"kind" must be one of stripe, github, standard-webhooks, svix, shopify, paddle, square, slack, linear, twilio, sendgrid, adyen, hmac/,
    ],
    ['hmac settings on a provider kind', 'sources: [{ name: shop, kind: shopify, secret: x, id: { header: X-Id } }]', /declared for hmac sources only/],
    ['a relative url', 'sources: [{ name: shop, kind: square, secret: x, url: /webhooks/shop }]', /"url" must be the absolute http\(s\) URL/],
    ['no secret', 'sources: [{ name: shop, kind: github, secretEnv: UNSET_VARIABLE }]', /set "secret" or "secretEnv"/],
    ['a taken name', 'sources: [{ name: stripe, kind: stripe, secret: x }]', /"stripe" already exists/],
    ['a non-string prefix', 'sources: [{ name: shop, kind: github, secret: x, workflowIdPrefix: 3 }]', /"workflowIdPrefix" must be up to 32 letters/],
    [
      "the internal workflows' prefix",
      'sources: [{ name: shop, kind: github, secret: x, workflowIdPrefix: "durable-webhooks:shop:" }]',
      /may not start with "durable-webhooks:"/,
    ],
    [
      'an apiKeyEnv on a GitHub source',
      'sources: [{ name: shop, kind: github, secret: x, apiKeyEnv: KEY }]',
      /"apiKeyEnv" names the variable with a Stripe source's API key/,
    ],
    ['a prefix with a space', 'sources: [{ name: shop, kind: github, secret: x, workflowIdPrefix: "a b" }]', /"workflowIdPrefix" must be up to 32 letters/],
    [
      'a list in one Stripe secret',
      'sources: [{ name: shop, kind: stripe, secret: "whsec_a whsec_b" }]',
      /each secret is one value; list several as a YAML list/,
    ],
    ['a secret that is not a string', 'sources: [{ name: shop, kind: github, secret: { a: 1 } }]', /"secret" must be a string or a list of strings/],
    [
      'a body limit that is not a size',
      'sources: [{ name: shop, kind: github, secret: x, maxBodyBytes: 1GB }]',
      /"maxBodyBytes" must be a positive number of bytes, such as 65536, 64KiB or 5MiB/,
    ],
  ])('refuses a WEBHOOKS_CONFIG with %s', (_reason, text, message) => {
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: writeConfig(text) })).toThrow(message);
  });

  it('stops on a key it does not know, naming the key and its line, in a source or at the top', () => {
    const misspelt = writeConfig('sources:\n  - name: shop\n    kind: github\n    secretEnvs: SHOP_SECRET\n');
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: misspelt })).toThrow(
      `WEBHOOKS_CONFIG (${misspelt}) line 4: "secretEnvs" is not a setting of a source; use name, kind, secret, secretEnv, publicKey, publicKeyEnv, workflowIdPrefix, apiKeyEnv, url, urlEnv, signature, id, type, unsignedHeadersOk, routes, rate, maxBodyBytes.`,
    );
    const routes = writeConfig('sources:\n  - name: shop\n    kind: stripe\n    secret: whsec_x\n    routs: { invoice.paid: recordEvent }\n');
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: routes })).toThrow(/line 5: "routs" is not a setting of a source/);
    const top = writeConfig('source:\n  - name: shop\n');
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: top })).toThrow(/line 1: "source" is not a setting of the file; use sources\./);
    const json = writeConfig('{"sources": [{"name": "shop", "kind": "github", "secret": "x", "prefix": "a"}]}', 'webhooks.json');
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: json })).toThrow(/line 1: "prefix" is not a setting of a source/);
  });

  it('says where a YAML error is without quoting the line, which may hold an inline secret', () => {
    const file = writeConfig('sources:\n  - name: shop\n    kind: github\n    secret: "s3cret-never-printed\n');
    let message = '';
    try {
      loadReceiverConfig({ WEBHOOKS_CONFIG: file });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^WEBHOOKS_CONFIG \(.+\) is not valid YAML or JSON at line \d+, column \d+ \([A-Z_]+\)\.$/);
    expect(message).not.toContain('s3cret');
  });

  it('names the file when WEBHOOKS_CONFIG cannot be read', () => {
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: '/nonexistent/webhooks.yaml' })).toThrow(
      /WEBHOOKS_CONFIG \(\/nonexistent\/webhooks.yaml\) cannot be read/,
    );
  });

  it('gives each process its own settings from shared parts: the worker never reads the sources file', () => {
    const env = {
      WEBHOOKS_CONFIG: '/nonexistent/webhooks.yaml',
      EMAIL_PROVIDER: 'smtp',
      SMTP_URL: 'smtp://127.0.0.1:1025',
      TEMPORAL_TASK_QUEUE: 'orders',
      ALLOW_PRIVATE_ENDPOINTS: 'true',
    };
    expect(() => loadReceiverConfig(env)).toThrow(/WEBHOOKS_CONFIG/);
    const worker = loadWorkerConfig(env);
    expect(worker).not.toHaveProperty('sources');
    expect(worker).toMatchObject(loadCommonConfig(env));
    expect(worker).toMatchObject({ taskQueue: 'orders', allowPrivateEndpoints: true });
  });
});

describe("providers' API URLs", () => {
  it.each(['STRIPE_API_URL', 'GITHUB_API_URL', 'PADDLE_API_URL', 'SQUARE_API_URL'])('%s is https, or plain http only on loopback or in development', (name) => {
    expect(() => loadReceiverConfig({ [name]: 'http://api.example.com' })).toThrow(
      `${name} must be an https URL (plain http only on loopback or in development): it carries the API key, not "http://api.example.com".`,
    );
    expect(() => loadReceiverConfig({ [name]: 'not a url' })).toThrow(`${name} must be a URL, not "not a url".`);
    for (const allowed of ['https://api.example.com', 'http://127.0.0.1:12111', 'http://localhost:12111', 'http://[::1]:12111'])
      expect(() => loadReceiverConfig({ [name]: allowed })).not.toThrow();
    expect(() => loadReceiverConfig({ [name]: 'http://stand-in:12111' }, { development: true })).not.toThrow();
    expect(() => loadWorkerConfig({ [name]: 'http://api.example.com', EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://x' })).toThrow(/must be an https URL/);
  });
});
