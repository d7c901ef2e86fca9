import { randomUUID } from 'node:crypto';
import { loadReceiverConfig } from '../../src/config';
import { loadBody } from '../../src/db/event-bodies';
import { SourceRegistry } from '../../src/providers/registry';
import { EventOperations } from '../../src/temporal/operations';
import { workflowExists } from '../../src/temporal/availability';
import {
  adyenBody,
  adyenItem,
  CATALOG_SECRETS,
  CATALOG_SECRETS_ENV,
  linearHeaders,
  SECRETS_ENV,
  paddleHeaders,
  SENDGRID_KEYS,
  shopifyHeaders,
  slackHeaders,
  squareHeaders,
  svixHeaders,
  twilioRequest,
} from '../support/signing';
import { post, runsOf, startStack, type WorkerStack } from '../support/stack';

/**
 * Every kind of the catalog through the real receiver, Temporal dev server, worker and PostgreSQL:
 * signed the way its provider signs, recorded once (202, then 200 duplicate), refused when
 * tampered (400), and each batch item its own workflow.
 */
let stack: WorkerStack;
beforeAll(async () => {
  stack = await startStack({ env: CATALOG_SECRETS_ENV });
});
afterAll(() => stack.close());

const seconds = () => Math.floor(Date.now() / 1000);
/** What `durable-webhooks events show|verify` run, with the receiver's sources. */
const operations = () =>
  new EventOperations(stack.client, {
    uiUrl: 'http://ui',
    db: stack.db,
    sources: new SourceRegistry(loadReceiverConfig({ ...SECRETS_ENV, ...CATALOG_SECRETS_ENV }, { development: true }).sources),
  });

interface Delivery {
  id: string;
  type: string;
  body: string;
  headers: Record<string, string>;
}

const deliveries: Record<string, () => Delivery> = {
  svix: () => {
    const id = `msg_${randomUUID()}`;
    const body = JSON.stringify({ data: { id: 'user_29w83sxmDNGwOuEthce5gg56FcC', object: 'user' }, object: 'event', type: 'user.created' });
    return { id, type: 'user.created', body, headers: svixHeaders(body, CATALOG_SECRETS.svix, { id }) };
  },
  shopify: () => {
    const id = randomUUID();
    // Each of Shopify's events has a body of its own (its updated_at at least): the same bytes again are a replay.
    const body = JSON.stringify({
      id: 788032119674292900,
      title: 'Durable mug',
      updated_at: new Date().toISOString(),
      admin_graphql_api_id: `gid://shopify/Product/${id}`,
    });
    // products/update: recorded only (the order topics run the fulfilment, tested with the flows).
    return { id, type: 'products/update', body, headers: shopifyHeaders(body, CATALOG_SECRETS.shopify, { eventId: id, topic: 'products/update' }) };
  },
  paddle: () => {
    const id = `evt_${randomUUID()}`;
    const body = JSON.stringify({
      event_id: id,
      event_type: 'transaction.completed',
      occurred_at: new Date().toISOString(),
      data: { id: 'txn_01hv8wptq8987qeep44cyrewp9' },
    });
    return { id, type: 'transaction.completed', body, headers: paddleHeaders(body, [CATALOG_SECRETS.paddle], seconds()) };
  },
  square: () => {
    const id = randomUUID();
    const body = JSON.stringify({
      merchant_id: '6SSW7HV8K2ST5',
      type: 'payment.updated',
      event_id: id,
      created_at: new Date().toISOString(),
      data: { type: 'payment', id: 'KkAk' },
    });
    return { id, type: 'payment.updated', body, headers: squareHeaders(body, CATALOG_SECRETS.square, CATALOG_SECRETS.squareUrl) };
  },
  slack: () => {
    const id = `Ev${randomUUID().slice(0, 8)}`;
    const body = JSON.stringify({ team_id: 'T1', type: 'event_callback', event_id: id, event_time: seconds(), event: { type: 'app_mention', channel: 'C1' } });
    return { id, type: 'app_mention', body, headers: slackHeaders(body, CATALOG_SECRETS.slack, seconds()) };
  },
  linear: () => {
    const id = randomUUID();
    const body = JSON.stringify({ action: 'create', type: 'Issue', data: { id: randomUUID(), identifier: 'ENG-1' }, webhookTimestamp: Date.now() });
    return { id, type: 'Issue.create', body, headers: linearHeaders(body, CATALOG_SECRETS.linear, id) };
  },
  twilio: () => {
    const id = `idem_${randomUUID()}`;
    const { body, headers } = twilioRequest(
      { AccountSid: 'AC1', MessageSid: `SM${randomUUID().replaceAll('-', '')}`, MessageStatus: 'delivered' },
      CATALOG_SECRETS.twilio,
      CATALOG_SECRETS.twilioUrl,
      id,
    );
    return { id, type: 'message.delivered', body, headers };
  },
};

describe.each(Object.keys(deliveries))('POST /webhooks/%s', (source) => {
  it('records a signed delivery once: 202 started, then 200 duplicate, as a recordEvent workflow whose ID is the event ID', async () => {
    const { id, type, body, headers } = deliveries[source]!();
    const first = await post(`${stack.url}/webhooks/${source}`, headers, body);
    expect(first.json).toEqual({ status: 'started', eventId: id, workflowId: id, runId: expect.any(String) });
    expect(first.status).toBe(202);
    const second = await post(`${stack.url}/webhooks/${source}`, headers, body);
    expect(second).toMatchObject({ status: 200, json: { status: 'duplicate', eventId: id } });

    const handle = stack.client.workflow.getHandle(id);
    expect(await handle.result()).toMatchObject({ source, eventId: id, type });
    expect((await handle.describe()).type).toBe('recordEvent');
    expect(await runsOf(stack.client, id)).toEqual([first.json!.runId]);
    // The stored body verifies again, with today's secrets, at the time it was received.
    expect(await operations().verify(id)).toMatchObject({ eventId: id, source, verified: true });
  });

  it('refuses a body changed after signing with 400, recording nothing', async () => {
    const { id, body, headers } = deliveries[source]!();
    const tampered = body.includes('"') ? body.replace(/"([^"]+)"\s*:/, '"$1 ":') : body.replace('delivered', 'failed');
    const response = await post(`${stack.url}/webhooks/${source}`, headers, tampered);
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ type: 'urn:durable-webhooks:problem:invalid-signature', source });
    expect(await loadBody(stack.db, source, id)).toBeUndefined();
  });

  it('takes the same signed bytes under a new ID header as a replay: nothing more is started', async () => {
    const { id, body, headers } = deliveries[source]!();
    expect((await post(`${stack.url}/webhooks/${source}`, headers, body)).status).toBe(202);
    const newId = `${id}-again`;
    const replayed = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value === id ? newId : value]));
    const response = await post(`${stack.url}/webhooks/${source}`, replayed, body);
    // Where the signature covers the ID, the changed header changes nothing (200) or breaks it (400).
    expect(response.status === 400 ? response.json : response).toMatchObject(
      response.status === 400 ? { type: 'urn:durable-webhooks:problem:invalid-signature' } : { status: 200, json: { status: 'duplicate' } },
    );
    expect(await workflowExists(stack.client, newId)).toBe(false);
    expect(await runsOf(stack.client, id)).toHaveLength(1);
  });
});

describe('an event ID another source recorded first', () => {
  it('is refused with 409 naming both sources, not answered as a duplicate and dropped', async () => {
    const shared = randomUUID();
    const shopifyBody = JSON.stringify({ id: 5829584289932, financial_status: 'paid' });
    expect(
      (
        await post(
          `${stack.url}/webhooks/shopify`,
          shopifyHeaders(shopifyBody, CATALOG_SECRETS.shopify, { eventId: shared, topic: 'orders/create' }),
          shopifyBody,
        )
      ).status,
    ).toBe(202);
    const linearBody = JSON.stringify({ action: 'create', type: 'Issue', data: { id: randomUUID() }, webhookTimestamp: Date.now() });
    const response = await post(`${stack.url}/webhooks/linear`, linearHeaders(linearBody, CATALOG_SECRETS.linear, shared), linearBody);
    expect(response).toMatchObject({
      status: 409,
      json: { type: 'urn:durable-webhooks:problem:event-id-conflict', source: 'linear', eventId: shared, otherSource: 'shopify' },
    });
    expect(await loadBody(stack.db, 'linear', shared)).toBeUndefined();
    expect((await stack.client.workflow.getHandle(shared).describe()).searchAttributes.WebhookSource).toEqual(['shopify']);
  });
});

describe('POST /webhooks/slack', () => {
  it('answers url_verification with the challenge and records nothing', async () => {
    const stored = async () => (await stack.db.query<{ count: string }>("SELECT count(*) FROM event_bodies WHERE source = 'slack'")).rows[0]!.count;
    const before = await stored();
    const body = JSON.stringify({ token: 'x', challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV', type: 'url_verification' });
    const response = await post(`${stack.url}/webhooks/slack`, slackHeaders(body, CATALOG_SECRETS.slack, seconds()), body);
    expect(response).toMatchObject({ status: 200, json: { challenge: 'challenge-3eZbrw1aBm2rZgRNFdxV' } });
    expect(await stored()).toBe(before);
  });
});

describe('POST /webhooks/sendgrid (a batch)', () => {
  it('records each item as its own workflow, once; a redelivery of the batch is all duplicates', async () => {
    const items = ['delivered', 'open', 'click'].map((event) => ({
      email: 'ada@example.com',
      timestamp: seconds(),
      event,
      sg_event_id: randomUUID(),
      sg_message_id: 'm1.filter',
    }));
    const body = JSON.stringify(items);
    const first = await post(`${stack.url}/webhooks/sendgrid`, SENDGRID_KEYS.headers(body, seconds()), body);
    expect(first.status).toBe(202);
    expect(first.json).toEqual({
      status: 'recorded',
      events: expect.arrayContaining(items.map((item) => ({ eventId: item.sg_event_id, workflowId: item.sg_event_id, status: 'started' }))),
    });
    for (const item of items) {
      expect(await stack.client.workflow.getHandle(item.sg_event_id).result()).toMatchObject({ source: 'sendgrid', type: item.event });
      // Each item is stored on its own: the email address stays out of Temporal, in the body store.
      expect(JSON.parse((await loadBody(stack.db, 'sendgrid', item.sg_event_id))!.body!.toString())).toEqual(item);
    }
    // Each item is an event of its own to operators: shown by its ID, and said to be part of a batch when verified.
    expect(await operations().show(items[1]!.sg_event_id)).toMatchObject({
      eventId: items[1]!.sg_event_id,
      source: 'sendgrid',
      eventType: 'open',
      status: 'completed',
    });
    expect(await operations().verify(items[1]!.sg_event_id)).toMatchObject({ verified: false, detail: expect.stringContaining('an item of a sendgrid batch') });
    const again = await post(`${stack.url}/webhooks/sendgrid`, SENDGRID_KEYS.headers(body, seconds()), body);
    expect(again.status).toBe(200);
    expect((again.json!.events as Array<{ status: string }>).map((event) => event.status)).toEqual(['duplicate', 'duplicate', 'duplicate']);
  });
});

describe('POST /webhooks/adyen (per-item signatures)', () => {
  it('answers [accepted] once every item is recorded', async () => {
    const items = [adyenItem(CATALOG_SECRETS.adyen), adyenItem(CATALOG_SECRETS.adyen, { eventCode: 'CAPTURE' })];
    const response = await fetch(`${stack.url}/webhooks/adyen`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: adyenBody(items) });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('[accepted]');
    for (const item of items) {
      const id = `${item.pspReference}:${item.eventCode}:true`;
      expect(await stack.client.workflow.getHandle(id).result()).toMatchObject({ source: 'adyen', eventId: id, type: item.eventCode });
      // Stored as a one-item delivery, each item verifies again on its own.
      expect(await operations().verify(id)).toMatchObject({ source: 'adyen', verified: true });
    }
  });

  it('refuses a forged item with 400 naming it, records the valid ones, and a redelivery finds those as duplicates', async () => {
    const good = adyenItem(CATALOG_SECRETS.adyen);
    const forged = adyenItem('00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF');
    const goodId = `${good.pspReference}:AUTHORISATION:true`;
    const body = adyenBody([good, forged]);
    const response = await post(`${stack.url}/webhooks/adyen`, { 'content-type': 'application/json' }, body);
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      type: 'urn:durable-webhooks:problem:invalid-items',
      recorded: [{ eventId: goodId, workflowId: goodId, status: 'started' }],
      refused: [{ index: 1, reason: expect.stringMatching(/hmacSignature does not match/) }],
    });
    expect(await stack.client.workflow.getHandle(goodId).result()).toMatchObject({ eventId: goodId });
    const forgedId = `${forged.pspReference}:AUTHORISATION:true`;
    expect(await loadBody(stack.db, 'adyen', forgedId)).toBeUndefined();

    const redelivery = await post(`${stack.url}/webhooks/adyen`, { 'content-type': 'application/json' }, body);
    expect(redelivery.json).toMatchObject({ recorded: [{ eventId: goodId, status: 'duplicate' }] });
    expect(await runsOf(stack.client, goodId)).toHaveLength(1);
  });
});
