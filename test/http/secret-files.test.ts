import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadReceiverConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import { createMetrics } from '../../src/http/metrics';
import { silentLogger } from '../../src/core/logger';
import { SourceRegistry } from '../../src/providers/registry';
import { SecretFileWatcher } from '../../src/providers/secret-files';
import { eventually } from '../support/eventually';
import { RecordingStarter } from '../support/recording-starter';
import { stripeEvent, stripeHeaders } from '../support/signing';
import { post } from '../support/stack';

/**
 * Signing secrets from files (`<NAME>_FILE`, as Kubernetes mounts a Secret), rotated without a
 * restart: the new value verifies at once, the old one for the grace period, and the metrics say
 * which of the two signed each delivery.
 */
const OLD = 'whsec_old_secret_from_the_file';
const NEW = 'whsec_new_secret_from_the_file';

function secretFile(value: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'dw-secret-')), 'STRIPE_WEBHOOK_SECRET');
  writeFileSync(file, `${value}\n`);
  return file;
}

describe('loading', () => {
  it('reads a secret from NAME_FILE without its final newline, _PREVIOUS_FILE too, and refuses NAME and NAME_FILE both set', () => {
    const config = loadReceiverConfig({ STRIPE_WEBHOOK_SECRET_FILE: secretFile(NEW), STRIPE_WEBHOOK_SECRET_PREVIOUS_FILE: secretFile(OLD) });
    expect(config.sources.find((source) => source.name === 'stripe')).toMatchObject({
      secrets: [NEW, OLD],
      secretFile: { env: 'STRIPE_WEBHOOK_SECRET', publicKey: false },
    });
    expect(() => loadReceiverConfig({ STRIPE_WEBHOOK_SECRET: NEW, STRIPE_WEBHOOK_SECRET_FILE: secretFile(NEW) })).toThrow(
      'STRIPE_WEBHOOK_SECRET is set in STRIPE_WEBHOOK_SECRET and STRIPE_WEBHOOK_SECRET_FILE; set one.',
    );
    expect(() => loadReceiverConfig({ STRIPE_WEBHOOK_SECRET_FILE: '/nonexistent/secret' })).toThrow(
      'STRIPE_WEBHOOK_SECRET_FILE (/nonexistent/secret) cannot be read: ENOENT.',
    );
  });
});

describe('SIGNING_SECRETS_DIR', () => {
  function signingDir(files: Record<string, string>): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'dw-signing-'));
    for (const [name, value] of Object.entries(files)) writeFileSync(path.join(dir, name), `${value}\n`);
    return dir;
  }

  it("reads every source's secret, its _PREVIOUS, a signed URL and a WEBHOOKS_CONFIG source's secretEnv from the directory, each as a file that rotates", () => {
    const dir = signingDir({
      STRIPE_WEBHOOK_SECRET: NEW,
      STRIPE_WEBHOOK_SECRET_PREVIOUS: OLD,
      SQUARE_WEBHOOK_SIGNATURE_KEY: 'square-key',
      SQUARE_WEBHOOK_URL: 'https://hooks.example.com/webhooks/square',
      PARTNER_SECRET: 'partner-secret',
    });
    const webhooksConfig = path.join(dir, '..', `${path.basename(dir)}.yaml`);
    writeFileSync(webhooksConfig, 'sources:\n  - name: partner\n    kind: github\n    secretEnv: PARTNER_SECRET\n');
    const { sources } = loadReceiverConfig({ NODE_ENV: 'production', SIGNING_SECRETS_DIR: dir, WEBHOOKS_CONFIG: webhooksConfig });
    expect(sources.find((source) => source.name === 'stripe')).toMatchObject({
      secrets: [NEW, OLD],
      secretFile: { env: 'STRIPE_WEBHOOK_SECRET', path: path.join(dir, 'STRIPE_WEBHOOK_SECRET'), publicKey: false },
    });
    expect(sources.find((source) => source.name === 'square')).toMatchObject({ secrets: ['square-key'], url: 'https://hooks.example.com/webhooks/square' });
    expect(sources.find((source) => source.name === 'partner')).toMatchObject({ secrets: ['partner-secret'] });
    // What the directory does not hold stays off, as an unset variable does.
    expect(sources.map((source) => source.name).sort()).toEqual(['partner', 'square', 'stripe']);
  });

  it('refuses a secret set both in the directory and in the environment, a file it cannot read (naming it), and a directory that is not there', () => {
    const dir = signingDir({ STRIPE_WEBHOOK_SECRET: NEW });
    expect(() => loadReceiverConfig({ SIGNING_SECRETS_DIR: dir, STRIPE_WEBHOOK_SECRET: OLD })).toThrow(
      'STRIPE_WEBHOOK_SECRET is set in STRIPE_WEBHOOK_SECRET and SIGNING_SECRETS_DIR/STRIPE_WEBHOOK_SECRET; set one.',
    );
    const unreadable = signingDir({});
    mkdirSync(path.join(unreadable, 'STRIPE_WEBHOOK_SECRET'));
    expect(() => loadReceiverConfig({ SIGNING_SECRETS_DIR: unreadable })).toThrow(
      `SIGNING_SECRETS_DIR/STRIPE_WEBHOOK_SECRET (${path.join(unreadable, 'STRIPE_WEBHOOK_SECRET')}) cannot be read: EISDIR.`,
    );
    expect(() => loadReceiverConfig({ SIGNING_SECRETS_DIR: '/nonexistent/signing' })).toThrow(
      'SIGNING_SECRETS_DIR (/nonexistent/signing) is not a directory: mount the Secret of signing secrets there, or unset it.',
    );
  });
});

describe('rotation from the file', () => {
  let server: Server;
  let url: string;
  let file: string;
  let watcher: SecretFileWatcher;
  const metrics = createMetrics();
  const starter = new RecordingStarter();

  beforeAll(async () => {
    file = secretFile(OLD);
    const config = loadReceiverConfig({ STRIPE_WEBHOOK_SECRET_FILE: file });
    const sources = new SourceRegistry(config.sources);
    watcher = new SecretFileWatcher(sources, config.sources, { graceMs: 2_000, logger: silentLogger, intervalMs: 50 });
    watcher.start();
    const app = createApp({ sources, starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger, metrics });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/stripe`;
  });
  afterAll(async () => {
    watcher.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const signedWith = (secret: string) => {
    const body = JSON.stringify(stripeEvent());
    return post(url, stripeHeaders(body, secret), body);
  };
  const counted = async (secret: 'current' | 'previous') =>
    (await metrics.verifications.get()).values.find((value) => value.labels.secret === secret)?.value ?? 0;

  it('verifies the new value once the file changes, the old one through the grace period, counted apart, then only the new', async () => {
    expect((await signedWith(OLD)).status).toBe(202);
    expect((await signedWith(NEW)).status).toBe(400);

    writeFileSync(file, `${NEW}\n`);
    await eventually('the new secret verifies', async () => (await signedWith(NEW)).status === 202, { intervalMs: 50 });
    const before = await counted('previous');
    expect((await signedWith(OLD)).status).toBe(202);
    expect(await counted('previous')).toBe(before + 1);
    const current = await counted('current');
    expect((await signedWith(NEW)).status).toBe(202);
    expect(await counted('current')).toBe(current + 1);

    await eventually('the old secret no longer verifies after the grace period', async () => (await signedWith(OLD)).status === 400, { intervalMs: 100 });
    expect((await signedWith(NEW)).status).toBe(202);

    // A file caught empty (mid-write) changes nothing.
    writeFileSync(file, '');
    watcher.reload('stripe');
    expect((await signedWith(NEW)).status).toBe(202);
  });
});
