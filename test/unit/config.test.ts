import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_BODY_BYTES, DEVELOPMENT_SECRETS, loadCommonConfig, loadReceiverConfig, loadWorkerConfig } from '../../src/config';

const writeConfig = (text: string, name = 'webhooks.yaml') => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-config-')), name);
  writeFileSync(file, text);
  return file;
};

describe('loadReceiverConfig', () => {
  it('in development, runs with no settings: port 3000, task queue webhooks, 256 KiB bodies, development secrets for the three sources', () => {
    const config = loadReceiverConfig({}, { development: true });
    expect(config).toMatchObject({ port: 3000, taskQueue: 'webhooks', maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    expect(config.sources.map((source) => [source.name, source.kind, source.secrets])).toEqual([
      ['stripe', 'stripe', [DEVELOPMENT_SECRETS.STRIPE_WEBHOOK_SECRET]],
      ['github', 'github', [DEVELOPMENT_SECRETS.GITHUB_WEBHOOK_SECRET]],
      ['standard', 'standard-webhooks', [DEVELOPMENT_SECRETS.STANDARD_WEBHOOK_SECRET]],
    ]);
    expect(config.developmentSecrets.map((secret) => secret.env)).toEqual(['STRIPE_WEBHOOK_SECRET', 'GITHUB_WEBHOOK_SECRET', 'STANDARD_WEBHOOK_SECRET']);
  });

  it('takes each secret whole, and the previous one from <NAME>_PREVIOUS during a rotation', () => {
    const config = loadReceiverConfig(
      { STRIPE_WEBHOOK_SECRET: 'whsec_new', STRIPE_WEBHOOK_SECRET_PREVIOUS: 'whsec_old', GITHUB_WEBHOOK_SECRET: 'correct horse battery, staple' },
      { development: true },
    );
    expect(config.sources[0]!.secrets).toEqual(['whsec_new', 'whsec_old']);
    expect(config.sources[1]!.secrets).toEqual(['correct horse battery, staple']);
    expect(config.developmentSecrets.map((secret) => secret.env)).toEqual(['STANDARD_WEBHOOK_SECRET']);
  });

  it.each([
    ['STRIPE_WEBHOOK_SECRET', 'whsec_new whsec_old'],
    ['STANDARD_WEBHOOK_SECRET', 'whsec_bmV3,whsec_b2xk'],
    ['STANDARD_WEBHOOK_PUBLIC_KEY', 'whpk_a whpk_b'],
  ])('refuses a list in %s, which cannot be one secret, and names the _PREVIOUS variable', (name, value) => {
    expect(() => loadReceiverConfig({ [name]: value })).toThrow(`${name} holds one value; during a rotation, put the previous one in ${name}_PREVIOUS.`);
  });

  it.each([[undefined], ['development'], ['test'], ['production']])(
    'outside development (NODE_ENV=%s), leaves a source off when its secret is unset instead of using a development value',
    (nodeEnv) => {
      const config = loadReceiverConfig({ NODE_ENV: nodeEnv, STRIPE_WEBHOOK_SECRET: 'whsec_live' });
      expect(config.sources.map((source) => source.name)).toEqual(['stripe']);
      expect(config.disabledSources).toEqual([
        { name: 'github', env: 'GITHUB_WEBHOOK_SECRET' },
        { name: 'standard', env: 'STANDARD_WEBHOOK_SECRET' },
      ]);
      expect(config.developmentSecrets).toEqual([]);
      expect(JSON.stringify(config)).not.toContain(DEVELOPMENT_SECRETS.STRIPE_WEBHOOK_SECRET.slice(6));
    },
  );

  it('reads API_TOKENS as named scopes: two tokens may share one (rotation)', () => {
    expect(loadReceiverConfig({ API_TOKENS: 'shop:tok_new shop:tok_old,billing:tok:with:colons' }).apiTokens).toEqual([
      { scope: 'shop', token: 'tok_new' },
      { scope: 'shop', token: 'tok_old' },
      { scope: 'billing', token: 'tok:with:colons' },
    ]);
  });

  it.each([['tok_without_scope'], ['Shop:tok_1'], ['shop:'], ['shop:tok_1 other:tok_1']])('refuses API_TOKENS=%s', (value) => {
    expect(() => loadReceiverConfig({ API_TOKENS: value })).toThrow(/API_TOKENS/);
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
    expect(() => loadWorkerConfig({ PAYMENT_RETRY_WINDOW: 'a week' }, { development: true })).toThrow('PAYMENT_RETRY_WINDOW must be a positive duration such as 30s, not "a week".');
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
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => loadReceiverConfig({ [name]: value })).toThrow(message);
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

  it('reads a JSON WEBHOOKS_CONFIG too', () => {
    const file = writeConfig(JSON.stringify({ sources: [{ name: 'gh-enterprise', kind: 'github', secret: 's3cret' }] }), 'webhooks.json');
    expect(loadReceiverConfig({ WEBHOOKS_CONFIG: file }).sources[0]).toMatchObject({ name: 'gh-enterprise', kind: 'github', secrets: ['s3cret'] });
  });

  it.each([
    ['no sources list', 'other: 1', /must have a "sources" list/],
    ['a bad name', 'sources: [{ name: "Bad Name", kind: github, secret: x }]', /"name" must be lower-case/],
    ['an unknown kind', 'sources: [{ name: shop, kind: shopify, secret: x }]', /"kind" must be one of stripe, github, standard-webhooks/],
    ['no secret', 'sources: [{ name: shop, kind: github, secretEnv: UNSET_VARIABLE }]', /set "secret" or "secretEnv"/],
    ['a taken name', 'sources: [{ name: stripe, kind: stripe, secret: x }]', /"stripe" already exists/],
    ['a non-string prefix', 'sources: [{ name: shop, kind: github, secret: x, workflowIdPrefix: 3 }]', /"workflowIdPrefix" must be up to 32 letters/],
    ['the internal workflows\' prefix', 'sources: [{ name: shop, kind: github, secret: x, workflowIdPrefix: "durable-webhooks:shop:" }]', /may not start with "durable-webhooks:"/],
    ['an apiKeyEnv on a GitHub source', 'sources: [{ name: shop, kind: github, secret: x, apiKeyEnv: KEY }]', /"apiKeyEnv" names the variable with a Stripe source's API key/],
    ['a prefix with a space', 'sources: [{ name: shop, kind: github, secret: x, workflowIdPrefix: "a b" }]', /"workflowIdPrefix" must be up to 32 letters/],
    ['a list in one Stripe secret', 'sources: [{ name: shop, kind: stripe, secret: "whsec_a whsec_b" }]', /each secret is one value; list several as a YAML list/],
    ['a secret that is not a string', 'sources: [{ name: shop, kind: github, secret: { a: 1 } }]', /"secret" must be a string or a list of strings/],
  ])('refuses a WEBHOOKS_CONFIG with %s', (_reason, text, message) => {
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: writeConfig(text) })).toThrow(message);
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
    expect(() => loadReceiverConfig({ WEBHOOKS_CONFIG: '/nonexistent/webhooks.yaml' })).toThrow(/WEBHOOKS_CONFIG \(\/nonexistent\/webhooks.yaml\) cannot be read/);
  });

  it('gives each process its own settings from shared parts: the worker never reads the sources file', () => {
    const env = { WEBHOOKS_CONFIG: '/nonexistent/webhooks.yaml', EMAIL_PROVIDER: 'smtp', SMTP_URL: 'smtp://127.0.0.1:1025', TEMPORAL_TASK_QUEUE: 'orders', ALLOW_PRIVATE_ENDPOINTS: 'true' };
    expect(() => loadReceiverConfig(env)).toThrow(/WEBHOOKS_CONFIG/);
    const worker = loadWorkerConfig(env);
    expect(worker).not.toHaveProperty('sources');
    expect(worker).toMatchObject(loadCommonConfig(env));
    expect(worker).toMatchObject({ taskQueue: 'orders', allowPrivateEndpoints: true });
  });
});
