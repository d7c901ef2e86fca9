import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { defaultPayloadConverter } from '@temporalio/common';
import { createCipheriv } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec, parseEncryptionKeys } from '../../src/temporal/codec';
import { temporalSettings } from '../../src/temporal/connection';
import { temporalCliPath } from '../../src/core/tools';
import { checkoutCompleted } from '../support/events';
import { post, startStack, type WorkerStack } from '../support/stack';

const run = promisify(execFile);
const key = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const OLD_KEY = key('2026-01');
const NEW_KEY = key('2026-12');
const OPTIONS = { namespace: 'default', plaintext: 'allow' } as const;
const ADMIN_TOKEN = 'admin-token-for-codec-tests-0123456789abcdef0123456789';
const CODEC_TOKEN = 'codec-token-for-the-ui-proxy-0123456789abcdef0123456789';
const UI_ORIGIN = 'http://localhost:18233';

let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: { PAYLOAD_ENCRYPTION_KEYS: `${NEW_KEY} ${OLD_KEY}`, ADMIN_TOKEN, CODEC_TOKEN, TEMPORAL_UI_URL: UI_ORIGIN } });
});
afterAll(() => stack.close());

/** `temporal workflow show -o json` against the suite's server, with `extra` flags. */
async function show(workflowId: string, ...extra: string[]): Promise<string> {
  const { stdout } = await run(temporalCliPath(), [
    'workflow',
    'show',
    '--workflow-id',
    workflowId,
    '--address',
    process.env.TEMPORAL_ADDRESS!,
    '--output',
    'json',
    ...extra,
  ]);
  return stdout;
}

/** The history's JSON with every payload's `data` decoded from base64 beside it: what a reader of it could see. */
function readable(historyJson: string): string {
  const decoded: string[] = [];
  JSON.parse(historyJson, (name, value: unknown) => {
    if (name === 'data' && typeof value === 'string') decoded.push(Buffer.from(value, 'base64').toString('utf8'));
    return value;
  });
  return [historyJson, ...decoded].join('\n');
}

const codec = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  post(
    `${stack.url}/codec${path}`,
    { 'content-type': 'application/json', authorization: `Bearer ${CODEC_TOKEN}`, 'x-namespace': 'default', ...headers },
    JSON.stringify(body),
  );

describe('with PAYLOAD_ENCRYPTION_KEYS', () => {
  it('Temporal holds only ciphertext with the key ID, and the codec endpoint decodes the same history', async () => {
    const marker = `ord_marker_${randomUUID()}`;
    const delivery = checkoutCompleted({ orderId: marker });
    expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
    expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'fulfilled' });

    const raw = await show(delivery.id);
    expect(readable(raw)).not.toContain(marker);
    const started = (
      JSON.parse(raw) as { events: Array<{ workflowExecutionStartedEventAttributes?: { input: { payloads: Array<{ metadata: Record<string, string> }> } } }> }
    ).events[0]!;
    const metadata = started.workflowExecutionStartedEventAttributes!.input.payloads[0]!.metadata;
    expect(Buffer.from(metadata.encoding!, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(metadata['encryption-key-id']!, 'base64').toString()).toBe('2026-12');

    // The `temporal` CLI decodes through the receiver's endpoint, as the UI does.
    const decoded = await show(delivery.id, '--codec-endpoint', `${stack.url}/codec`, '--codec-auth', `Bearer ${CODEC_TOKEN}`);
    expect(readable(decoded)).toContain(marker);
  });

  it("encrypts failures' messages and stack traces too: history shows only 'Encoded failure'", async () => {
    const marker = `failure_marker_${randomUUID()}`;
    stack.resend.failNextWith(500, `refused for ${marker}`);
    const delivery = checkoutCompleted();
    expect((await post(`${stack.url}/webhooks/stripe`, delivery.headers, delivery.body)).status).toBe(202);
    expect(await stack.client.workflow.getHandle(delivery.id).result()).toMatchObject({ outcome: 'fulfilled' });

    // The attempt that failed is recorded on the next one's start (`lastFailure`): its text only encrypted.
    const raw = await show(delivery.id);
    expect(readable(raw)).not.toContain(marker);
    type Failure = { message: string; encodedAttributes: unknown };
    const events = (JSON.parse(raw) as { events: Array<{ activityTaskStartedEventAttributes?: { lastFailure?: Failure } }> }).events;
    const lastFailure = events.map((event) => event.activityTaskStartedEventAttributes?.lastFailure).find(Boolean)!;
    expect(lastFailure.message).toBe('Encoded failure');

    // The codec endpoint decodes them for an operator, as the UI and the CLI ask it to.
    const decoded = await codec('/decode', { payloads: [lastFailure.encodedAttributes] });
    const [attributes] = (decoded.json as { payloads: Array<{ data: string }> }).payloads;
    expect(JSON.parse(Buffer.from(attributes!.data, 'base64').toString())).toMatchObject({ message: expect.stringContaining(marker) });
  });

  it('decodes payloads encrypted with an older key, and encodes with the first', async () => {
    const plain = defaultPayloadConverter.toPayload({ marker: 'rotated' });
    const [old] = await new EncryptionCodec(parseEncryptionKeys(OLD_KEY), OPTIONS).encode([plain]);
    const asJson = {
      metadata: Object.fromEntries(Object.entries(old!.metadata!).map(([name, value]) => [name, Buffer.from(value!).toString('base64')])),
      data: Buffer.from(old!.data!).toString('base64'),
    };

    const response = await codec('/decode', { payloads: [asJson] });
    expect(response.status).toBe(200);
    const [payload] = (response.json as { payloads: Array<{ data: string }> }).payloads;
    expect(JSON.parse(Buffer.from(payload!.data, 'base64').toString())).toEqual({ marker: 'rotated' });

    const encoded = await codec('/encode', {
      payloads: [{ metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"x"').toString('base64') }],
    });
    const [encrypted] = (encoded.json as { payloads: Array<{ metadata: Record<string, string> }> }).payloads;
    expect(Buffer.from(encrypted!.metadata['encryption-key-id']!, 'base64').toString()).toBe('2026-12');
  });

  it('opens /codec to CODEC_TOKEN and the admin token, and nothing else to CODEC_TOKEN', async () => {
    expect((await codec('/decode', { payloads: [] }, { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
    const erase = await post(
      `${stack.url}/admin/events/evt_any/erase`,
      { 'content-type': 'application/json', authorization: `Bearer ${CODEC_TOKEN}` },
      '{"reason":"x"}',
    );
    expect(erase.status).toBe(401);
    expect((await fetch(`${stack.url}/admin/events`, { headers: { authorization: `Bearer ${CODEC_TOKEN}` } })).status).toBe(401);
  });

  it('refuses callers without the codec token, and another namespace', async () => {
    expect((await codec('/decode', { payloads: [] }, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(`${stack.url}/codec/decode`, { 'content-type': 'application/json' }, '{"payloads":[]}')).status).toBe(401);
    const other = await codec('/decode', { payloads: [] }, { 'x-namespace': 'someone-else' });
    expect(other.status).toBe(400);
    expect(other.json).toMatchObject({ detail: expect.stringContaining('"default"') });
    expect((await codec('/decode', { payloads: 'not a list' })).status).toBe(400);
    expect((await codec('/decode', { payloads: [{ metadata: 'not an object' }] })).status).toBe(400);
  });

  it("lets the Temporal UI's origin call it from a browser, and no other", async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.url}/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' },
      });
    const allowed = await preflight(UI_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-namespace');
    expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('PAYLOAD_ENCRYPTION_KEYS', () => {
  it.each([
    ['no colon', 'abc', /entry 1 must be <keyId>:<base64 key>/],
    ['a short key', `k1:${randomBytes(16).toString('base64')}`, /key "k1" must be 32 bytes/],
    ['one ID twice', `${key('k1')} ${key('k1')}`, /names key "k1" twice/],
  ])('refuses %s without printing the key', (_name, value, message) => {
    expect(() => parseEncryptionKeys(value)).toThrow(message);
    try {
      parseEncryptionKeys(value);
    } catch (error) {
      expect((error as Error).message).not.toContain(value.split(':')[1]?.slice(0, 8) || '\u0000');
    }
  });

  it('refuses encrypted data shorter than its nonce and tag, and any change to a payload', async () => {
    const codec = new EncryptionCodec(parseEncryptionKeys(NEW_KEY), OPTIONS);
    const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload('secret')]);
    const withData = (data: Uint8Array) => [{ ...encrypted!, data }];
    await expect(codec.decode(withData(encrypted!.data!.subarray(0, 27)))).rejects.toThrow(/27 bytes is shorter than its nonce and tag \(28\)/);
    const changed = Buffer.from(encrypted!.data!);
    changed[changed.length - 20] = changed[changed.length - 20]! ^ 1;
    await expect(codec.decode(withData(changed))).rejects.toThrow(/authenticate/);
  });

  it('binds the namespace into every ciphertext, and still reads payloads written before it was bound', async () => {
    const keys = parseEncryptionKeys(NEW_KEY);
    const [bound] = await new EncryptionCodec(keys, OPTIONS).encode([defaultPayloadConverter.toPayload('secret')]);
    await expect(new EncryptionCodec(keys, { ...OPTIONS, namespace: 'other' }).decode([bound!])).rejects.toThrow(/authenticate/);
    expect(defaultPayloadConverter.fromPayload((await new EncryptionCodec(keys, OPTIONS).decode([bound!]))[0]!)).toBe('secret');

    // What the codec wrote before: the key ID alone as associated data, no namespace marker.
    const [id, key] = [keys[0]!.id, keys[0]!.key];
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    cipher.setAAD(Buffer.from(id));
    const plaintext = temporal.api.common.v1.Payload.encode(defaultPayloadConverter.toPayload('older')).finish();
    const older = {
      metadata: { encoding: Buffer.from('binary/encrypted'), 'encryption-key-id': Buffer.from(id) },
      data: Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]),
    };
    expect(defaultPayloadConverter.fromPayload((await new EncryptionCodec(keys, OPTIONS).decode([older]))[0]!)).toBe('older');
  });

  it('refuses plaintext payloads on workers, unless PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT is on for a migration', async () => {
    const plain = defaultPayloadConverter.toPayload({ injected: true });
    const worker = (env: Record<string, string>) =>
      temporalSettings({ PAYLOAD_ENCRYPTION_KEYS: NEW_KEY, ...env }, { worker: true }).dataConverter!.payloadCodecs![0]!;
    await expect(worker({}).decode([plain])).rejects.toThrow(
      'A payload is not encrypted, and PAYLOAD_ENCRYPTION_KEYS is set: refused. While payloads from before encryption are still in flight, set PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT=true on the workers.',
    );
    expect(await worker({ PAYLOAD_ENCRYPTION_ALLOW_PLAINTEXT: 'true' }).decode([plain])).toEqual([plain]);
    // Clients and the codec endpoint read them, to show what an older history holds.
    expect(await temporalSettings({ PAYLOAD_ENCRYPTION_KEYS: NEW_KEY }).dataConverter!.payloadCodecs![0]!.decode([plain])).toEqual([plain]);
  });

  it('the codec with only the new key cannot read what the old key wrote', async () => {
    const plain = defaultPayloadConverter.toPayload('secret');
    const encrypted = await new EncryptionCodec(parseEncryptionKeys(OLD_KEY), OPTIONS).encode([plain]);
    await expect(new EncryptionCodec(parseEncryptionKeys(NEW_KEY), OPTIONS).decode(encrypted)).rejects.toThrow(/key "2026-01"/);
  });
});
