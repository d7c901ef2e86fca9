import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { loadReceiverConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import { silentLogger } from '../../src/core/logger';
import { SourceRegistry } from '../../src/providers/registry';
import { adyenBody, adyenItem, CATALOG_SECRETS, CATALOG_SECRETS_ENV, SENDGRID_KEYS } from '../support/signing';
import { RecordingStarter } from '../support/recording-starter';
import { post } from '../support/stack';

// A batch is answered 2xx only when every item is recorded; a partial failure loses none.
let starter: RecordingStarter;
let server: Server;
let url: string;
beforeEach(async () => {
  starter = new RecordingStarter();
  const config = loadReceiverConfig(CATALOG_SECRETS_ENV);
  const app = createApp({ sources: new SourceRegistry(config.sources), starter, maxBodyBytes: config.maxBodyBytes, logger: silentLogger });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/sendgrid`;
});
afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

const batch = (count: number) => {
  const items = Array.from({ length: count }, () => ({
    email: 'ada@example.com',
    timestamp: Math.floor(Date.now() / 1000),
    event: 'delivered',
    sg_event_id: randomUUID(),
  }));
  const body = JSON.stringify(items);
  return { ids: items.map((item) => item.sg_event_id), body, headers: () => SENDGRID_KEYS.headers(body, Math.floor(Date.now() / 1000)) };
};

it('answers 503 naming what was and was not recorded when an item cannot be started, and the redelivery records only the rest', async () => {
  const { ids, body, headers } = batch(20);
  starter.unavailableFor.add(ids[3]!).add(ids[17]!);
  const first = await post(url, headers(), body);
  expect(first.status).toBe(503);
  expect(first.headers.get('retry-after')).toBe('5');
  expect(first.json).toMatchObject({ type: 'urn:durable-webhooks:problem:batch-not-recorded' });
  expect((first.json!.notRecorded as string[]).sort()).toEqual([ids[3], ids[17]].sort());
  expect(first.json!.recorded).toHaveLength(18);

  starter.unavailableFor.clear();
  const redelivery = await post(url, headers(), body);
  expect(redelivery.status).toBe(202);
  const statuses = Object.fromEntries((redelivery.json!.events as Array<{ eventId: string; status: string }>).map((event) => [event.eventId, event.status]));
  expect(
    Object.entries(statuses)
      .filter(([, status]) => status === 'started')
      .map(([id]) => id)
      .sort(),
  ).toEqual([ids[3], ids[17]].sort());
  // Every item started exactly one workflow over both deliveries.
  expect(starter.started.map((event) => event.id).sort()).toEqual([...ids].sort());
});

it('starts a batch of 500 items, each once', async () => {
  const { ids, body, headers } = batch(500);
  const response = await post(url, headers(), body);
  expect(response.status).toBe(202);
  expect(new Set(starter.started.map((event) => event.id))).toEqual(new Set(ids));
  expect(starter.calls).toHaveLength(500);
});

it('answers an empty batch 200 with no event', async () => {
  const { body, headers } = batch(0);
  expect(await post(url, headers(), body)).toMatchObject({ status: 200, json: { status: 'recorded', events: [] } });
});

it('names at most 20 refused items of a batch and counts the rest, so a refusal stays small', async () => {
  const good = adyenItem(CATALOG_SECRETS.adyen);
  const forged = adyenItem('00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF');
  const body = adyenBody([good, ...Array.from({ length: 1000 }, () => forged)]);
  const response = await post(url.replace(/sendgrid$/, 'adyen'), { 'content-type': 'application/json' }, body);
  expect(response.status).toBe(400);
  expect(response.json).toMatchObject({
    type: 'urn:durable-webhooks:problem:invalid-items',
    refusedCount: 1000,
    recorded: [{ eventId: `${good.pspReference}:AUTHORISATION:true`, status: 'started' }],
  });
  expect(response.json!.refused).toHaveLength(20);
  expect(response.text.length).toBeLessThan(5000);
});

it('answers a batch of unsigned items with one line, not one per item', async () => {
  const body = `{"notificationItems":[${Array.from({ length: 10_000 }, () => '0').join(',')}]}`;
  const response = await post(url.replace(/sendgrid$/, 'adyen'), { 'content-type': 'application/json' }, body);
  expect(response.status).toBe(400);
  expect(response.json).toMatchObject({
    type: 'urn:durable-webhooks:problem:invalid-signature',
    detail: 'No item of the 10000 in the batch is signed with a configured HMAC key.',
  });
  expect(response.text.length).toBeLessThan(1000);
});
