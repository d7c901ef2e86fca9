import { loadReceiverConfig } from '../../../src/config';
import { SignatureVerificationError } from '../../../src/core/delivery-errors';
import { PROVIDERS } from '../../../src/providers/index';
import { createAdapter } from '../../../src/providers/registry';
import type { Delivery } from '../../../src/providers/types';

/**
 * Every declared kind keeps checking apart from reading, as its adapter's type says: `check` accepts
 * what `sign` made and refuses the same delivery once a signed part changed; `read` checks nothing,
 * so it reads the changed delivery as it reads the signed one. A kind is held to this the moment it
 * is declared, with its development secret and each of its samples.
 */
const { sources } = loadReceiverConfig({}, { development: true });
const cases = PROVIDERS.flatMap((provider) =>
  Object.entries(provider.samples).map(([type, payload]) => ({
    kind: provider.kind,
    type,
    payload,
    source: sources.find((source) => source.name === provider.builtIn?.name)!,
  })),
);

/**
 * The delivery with its signed content changed and still readable: a JSON body gains a field and
 * every number in it grows by one (Adyen signs the amount inside each item, not the bytes); a form
 * gains a parameter. IDs and types are text, so they stay.
 */
function changed(delivery: Delivery): Delivery {
  const text = delivery.rawBody.toString('utf8');
  if (String(delivery.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
    return { ...delivery, rawBody: Buffer.from(`${text}&Changed=1`) };
  const grow = (value: unknown): unknown =>
    typeof value === 'number'
      ? value + 1
      : Array.isArray(value)
        ? value.map(grow)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, grow(inner)]))
          : value;
  const body = grow(JSON.parse(text));
  return { ...delivery, rawBody: Buffer.from(JSON.stringify(Array.isArray(body) ? body : { ...(body as object), changed: true })) };
}

it('covers every declared kind with a sample', () => {
  expect(new Set(cases.map((entry) => entry.kind))).toEqual(new Set(PROVIDERS.filter((provider) => provider.builtIn).map((provider) => provider.kind)));
});

it.each(cases.map((entry) => [entry.kind, entry.type, entry] as const))('%s %s: check decides, read only reads', async (_kind, type, { source, payload }) => {
  const adapter = createAdapter(source);
  const receivedAt = new Date();
  const id = adapter.sampleId();
  const signed = adapter.sign({ id, type, payload, timestamp: receivedAt });
  const delivery: Delivery = {
    rawBody: Buffer.from(signed.body),
    headers: Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value])),
    receivedAt,
  };

  const checked = await adapter.check(delivery);
  const { events } = adapter.read(delivery, checked);
  expect(events).toHaveLength(1);
  expect(events[0]!.id).toContain(id);
  expect(await adapter.verify(delivery)).toEqual(adapter.read(delivery, checked));

  const altered = changed(delivery);
  await expect(adapter.check(altered)).rejects.toBeInstanceOf(SignatureVerificationError);
  await expect(adapter.verify(altered)).rejects.toBeInstanceOf(SignatureVerificationError);
  expect(adapter.read(altered, {}).events.map((event) => [event.id, event.type])).toEqual(events.map((event) => [event.id, event.type]));
});
