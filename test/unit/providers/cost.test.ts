import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { MalformedEventError, SignatureVerificationError } from '../../../src/core/delivery-errors';
import { MAX_BATCH_ITEMS, MAX_ED25519_SIGNATURES, MAX_FORM_FIELDS } from '../../../src/providers/limits';
import { formParams } from '../../../src/providers/twilio';
import { createAdapter } from '../../../src/providers/registry';
import type { ProviderAdapter } from '../../../src/providers/types';
import { ProviderKind } from '../../../contracts';
import { HOSTILE, HOSTILE_RECEIVED_AT as receivedAt, hostileDeliveries, hostileSources } from '../../support/hostile';

/**
 * The door's first rule, for every provider kind: the worst delivery one can build within the
 * header and body limits, with no secret, is refused, and what it cost is counted, not timed:
 * signature computations (HMACs, ed25519 and ECDSA verifications, WebCrypto signatures) and the
 * bytes they read. Each configured secret may read the delivery once.
 */

/**
 * What signature work `run` does: the computations that read more than a KiB (a signature over the
 * delivery; a constant-time comparison's HMACs of two signatures do not count) and the bytes
 * every computation reads.
 */
async function counted(run: () => Promise<unknown>) {
  const work = { computations: 0, bytes: 0 };
  const size = (data: unknown, encoding?: BufferEncoding) =>
    typeof data === 'string'
      ? Buffer.byteLength(data, encoding)
      : ArrayBuffer.isView(data)
        ? data.byteLength
        : data instanceof ArrayBuffer
          ? data.byteLength
          : 0;
  const read = (bytes: number) => {
    work.bytes += bytes;
    if (bytes > 1024) work.computations++;
  };
  const { createHmac, verify } = crypto;
  const standardSign = Webhook.prototype.sign;
  const subtleSign = crypto.webcrypto.subtle.sign.bind(crypto.webcrypto.subtle);
  const spies = [
    jest.spyOn(crypto, 'createHmac').mockImplementation((...args: Parameters<typeof crypto.createHmac>) => {
      const hmac = createHmac(...args);
      const update = hmac.update.bind(hmac);
      let bytes = 0;
      hmac.update = ((data: crypto.BinaryLike, encoding?: BufferEncoding) => {
        bytes += size(data, encoding);
        return update(data as string, encoding as BufferEncoding);
      }) as typeof hmac.update;
      const digest = hmac.digest.bind(hmac);
      hmac.digest = ((encoding?: crypto.BinaryToTextEncoding) => {
        read(bytes);
        return encoding ? digest(encoding) : digest();
      }) as typeof hmac.digest;
      return hmac;
    }),
    jest.spyOn(crypto, 'verify').mockImplementation(((
      algorithm: string | null,
      data: NodeJS.ArrayBufferView,
      key: crypto.KeyLike,
      signature: NodeJS.ArrayBufferView,
    ) => {
      read(size(data));
      return verify(algorithm, data, key, signature);
    }) as typeof crypto.verify),
    jest.spyOn(crypto.webcrypto.subtle, 'sign').mockImplementation(async (algorithm, key, data) => {
      read(size(data));
      return subtleSign(algorithm, key, data);
    }),
    // The standardwebhooks package computes its HMAC in JavaScript (@stablelib), not in node:crypto.
    jest.spyOn(Webhook.prototype, 'sign').mockImplementation(function (this: Webhook, id: string, timestamp: Date, payload: string | Buffer) {
      read(size(payload));
      return standardSign.call(this, id, timestamp, payload);
    }),
  ];
  try {
    const outcome = await run().then(
      () => 'accepted',
      (error: Error) => error,
    );
    return { ...work, outcome };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

const configured = hostileSources();
const adapters = configured.map((config) => ({ config, adapter: createAdapter(config) as ProviderAdapter }));

describe('a refused delivery costs one signature computation per configured secret, reading it once', () => {
  it('has hostile deliveries of its own for every provider kind we ship', () => {
    expect(new Set(adapters.map(({ adapter }) => adapter.kind))).toEqual(new Set(Object.values(ProviderKind)));
    expect(Object.keys(HOSTILE).sort()).toEqual(Object.values(ProviderKind).sort());
  });

  const cases = adapters.flatMap(({ config, adapter }) =>
    hostileDeliveries(adapter.kind, adapter.signatureHeaders).map(({ what, delivery }) => ({
      source: config.name,
      kind: adapter.kind,
      what,
      delivery,
      adapter,
      keys: config.secrets.length + config.publicKeys.length,
    })),
  );
  it.each(cases.map((entry) => [`${entry.source}: ${entry.what}`, entry] as const))('%s', async (_title, { adapter, delivery, keys }) => {
    const { computations, bytes, outcome } = await counted(() => adapter.verify({ ...delivery, receivedAt }));
    expect(outcome).toBeInstanceOf(Error);
    // Each case makes the adapter compute at least one signature, or refuses it before any: the counting works.
    expect(computations > 0 || /at most/.test((outcome as Error).message) || /signed with a configured/.test((outcome as Error).message)).toBe(true);
    expect([SignatureVerificationError, MalformedEventError].some((type) => outcome instanceof type)).toBe(true);
    // What a signature covers besides the body and headers (a URL, a version prefix) is small.
    const size = delivery.rawBody.length + JSON.stringify(delivery.headers).length + 256;
    if (adapter.batch && adapter.kind === ProviderKind.ADYEN) {
      // Adyen signs each item, not the delivery: an HMAC per item and key, over that item's fields only.
      expect(computations).toBeLessThanOrEqual(MAX_BATCH_ITEMS * keys);
    } else {
      // The ed25519 of Standard Webhooks' v1a cannot be computed once and compared: one verification per offered entry and key, entries capped.
      const perKey = adapter.kind === ProviderKind.STANDARD_WEBHOOKS || adapter.kind === ProviderKind.SVIX ? 1 + MAX_ED25519_SIGNATURES : 1;
      expect(computations).toBeLessThanOrEqual(perKey * keys);
    }
    expect(bytes).toBeLessThanOrEqual(
      size * keys * (adapter.kind === ProviderKind.STANDARD_WEBHOOKS || adapter.kind === ProviderKind.SVIX ? 1 + MAX_ED25519_SIGNATURES : 1),
    );
  });

  it('refuses too many signature entries, form fields and batch items before computing any signature', async () => {
    const byKind = (kind: ProviderKind) => adapters.find(({ adapter }) => adapter.kind === kind)!.adapter;
    for (const [kind, what] of [
      [ProviderKind.PADDLE, 'a header full of h1 entries'],
      [ProviderKind.STANDARD_WEBHOOKS, 'a header full of v1a entries'],
      [ProviderKind.TWILIO, 'one name repeated over 128 KiB'],
      [ProviderKind.ADYEN, 'more items than a batch may carry'],
    ] as const) {
      const { delivery } = HOSTILE[kind]!().find((entry) => entry.what === what)!;
      const { computations, outcome } = await counted(() => byKind(kind).verify({ ...delivery, receivedAt }));
      expect({ kind, computations, refused: outcome instanceof Error }).toEqual({ kind, computations: 0, refused: true });
    }
  });
});

describe('what is parsed or computed before a signature is checked', () => {
  const byKind = (kind: ProviderKind) => adapters.find(({ adapter }) => adapter.kind === kind)!.adapter;

  it("counts a form's fields on its bytes: URLSearchParams is never built for one over the limit", () => {
    const Real = globalThis.URLSearchParams;
    let built = 0;
    globalThis.URLSearchParams = class extends Real {
      constructor(...args: ConstructorParameters<typeof URLSearchParams>) {
        super(...args);
        built++;
      }
    };
    try {
      expect(() => formParams(Buffer.from('a&'.repeat(MAX_FORM_FIELDS)), 'twilio')).toThrow(MalformedEventError);
      expect(built).toBe(0);
      // At the limit it is read: the counting sees a construction.
      expect(Object.keys(formParams(Buffer.from('a&'.repeat(MAX_FORM_FIELDS - 1)), 'twilio'))).toEqual(['a']);
      expect(built).toBe(1);
    } finally {
      globalThis.URLSearchParams = Real;
    }
  });

  it.each([ProviderKind.STANDARD_WEBHOOKS, ProviderKind.SVIX])(
    "%s: check computes v1 with node:crypto, never the package's pure-JavaScript sign",
    async (kind) => {
      const adapter = byKind(kind);
      const sample = adapter.sign({ id: adapter.sampleId(), type: 'order.created', payload: { orderId: 'ord_1' }, timestamp: receivedAt });
      const spy = jest.spyOn(Webhook.prototype, 'sign');
      try {
        await expect(adapter.check({ rawBody: Buffer.from(sample.body), headers: sample.headers, receivedAt })).resolves.toEqual({});
        const tampered = { rawBody: Buffer.from(sample.body.replace('ord_1', 'ord_2')), headers: sample.headers, receivedAt };
        await expect(adapter.check(tampered)).rejects.toThrow(SignatureVerificationError);
        expect(spy).not.toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    },
  );

  it(`refuses more than ${MAX_ED25519_SIGNATURES} v1a entries before verifying any`, async () => {
    const { delivery } = HOSTILE[ProviderKind.STANDARD_WEBHOOKS]!().find((entry) => entry.what.includes('v1 and v1a'))!;
    const { computations, outcome } = await counted(() => byKind(ProviderKind.STANDARD_WEBHOOKS).check({ ...delivery, receivedAt }));
    expect(computations).toBeLessThanOrEqual(hostileSources().find((config) => config.kind === ProviderKind.STANDARD_WEBHOOKS)!.secrets.length);
    expect((outcome as Error).message).toMatch(`at most ${MAX_ED25519_SIGNATURES} are checked`);
  });
});
