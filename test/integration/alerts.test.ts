import { ProviderKind } from '../../contracts';
import { storeBody } from '../../src/db/event-bodies';
import { deferStart, markStarted } from '../../src/db/inbox';
import { claimEvent, completeEvent } from '../../src/db/ledger';
import { recordParked } from '../../src/db/entities';
import { silentLogger } from '../../src/core/logger';
import { AlertChecker } from '../../src/outbound/alerts';
import type { MessageService } from '../../src/outbound/messages';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startEndpointServer } from '../support/endpoint-server';
import { eventually } from '../support/eventually';
import { startStack, type WorkerStack } from '../support/stack';

/**
 * Alerts: each new failure group, each group past the threshold and each dead-lettered row is
 * alerted once, whichever receivers check; a send that fails leaves it to the next check; a Slack
 * endpoint gets `{"text": …}` through our own delivery.
 */
let received = 0;

async function failed(db: TestDatabase, id: string, errorClass: string) {
  const receivedAt = new Date().toISOString();
  const start = {
    flow: 'recordEvent',
    input: { source: 'stripe', provider: ProviderKind.STRIPE, id, type: 'invoice.paid', occurredAt: receivedAt, receivedAt },
    summary: id,
  };
  await storeBody(
    db,
    { source: 'stripe', eventId: id, workflowId: id, provider: ProviderKind.STRIPE, via: 'delivery', receivedAt, start, leaseMs: 0 },
    { raw: Buffer.from('{}'), contentType: 'application/json', signatureHeaders: {} },
  );
  await markStarted(db, [{ source: 'stripe', eventId: id }]);
  await claimEvent(db, { source: 'stripe', eventId: id, type: 'invoice.paid', workflowId: id, firstExecutionRunId: `run-${id}` });
  await completeEvent(db, { source: 'stripe', eventId: id, status: 'failed', outcome: { errorClass } });
}

describe('the alert checker', () => {
  let db: TestDatabase;
  const sent: Array<{ scope: string; key: string; payload: unknown }> = [];
  let failing = false;
  const messages = {
    publish: async (scope: string, key: string, body: { eventType: string; payload: unknown }) => {
      if (failing) throw new Error('Temporal is unavailable');
      sent.push({ scope, key, payload: body.payload });
      return { replayed: false, receipt: { id: `msg_${(received += 1)}`, eventType: body.eventType, createdAt: '', endpoints: [] } };
    },
  } as unknown as MessageService;
  const config = {
    webhook: { url: 'https://alerts.example.com/hook', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
    intervalMs: 60_000,
    groupThreshold: 3,
    consoleUrl: 'https://ops.example.com/console',
  };

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.drop());

  it('alerts a new group once whichever receiver checks, once more past the threshold, and again when sending failed', async () => {
    const [first, second] = [new AlertChecker(db, messages, config, silentLogger), new AlertChecker(db, messages, config, silentLogger)];
    await failed(db, 'a-1', 'sendEmail › EmailRejected');
    expect((await first.check()).map((alert) => alert.type)).toEqual(['failure_group.new']);
    expect(await second.check()).toEqual([]);
    expect(sent).toEqual([
      {
        scope: 'alerts:webhook',
        key: expect.stringMatching(/^failure_group\.new:[0-9a-f]{16}:\d+$/),
        payload: expect.objectContaining({
          source: 'stripe',
          type: 'invoice.paid',
          errorClass: 'sendEmail › EmailRejected',
          count: 1,
          text: expect.stringContaining('https://ops.example.com/console/failures/'),
        }),
      },
    ]);

    await failed(db, 'a-2', 'sendEmail › EmailRejected');
    expect(await second.check()).toEqual([]);
    await failed(db, 'a-3', 'sendEmail › EmailRejected');
    failing = true;
    await expect(first.check()).rejects.toThrow('Temporal is unavailable');
    failing = false;
    expect((await second.check()).map((alert) => [alert.type, alert.data.count])).toEqual([['failure_group.growing', 3]]);
    expect(await first.check()).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it('alerts the rows dead-lettered since the last pass in one alert, counted, naming no internal host or port', async () => {
    const checker = new AlertChecker(db, messages, config, silentLogger);
    await checker.check();
    sent.length = 0;
    for (let index = 0; index < 7; index++)
      await deadLettered(db, `dl-${index}`, 'connect ECONNREFUSED 10.20.30.40:7233 (temporal-frontend.temporal.svc:7233)');
    const alerts = await checker.check();
    expect(alerts.map((alert) => [alert.type, alert.data.count])).toEqual([['inbox.dead_lettered', 7]]);
    expect(sent).toHaveLength(1);
    const { text } = sent[0]!.payload as { text: string };
    expect(text).toMatch(
      /^Dead-lettered: 7 event\(s\) not started \(stripe dl-0, stripe dl-1, stripe dl-2, stripe dl-3, stripe dl-4 and 2 more; the first because: connect ECONNREFUSED <address> \(<address>\)\)/,
    );
    expect(JSON.stringify(sent[0]!.payload)).not.toMatch(/10\.20\.30\.40|:7233/);
    expect(await checker.check()).toEqual([]);
  });

  it('alerts each key newly parked on a failed event once, whichever receiver checks; parked again on another event, again', async () => {
    const [first, second] = [new AlertChecker(db, messages, config, silentLogger), new AlertChecker(db, messages, config, silentLogger)];
    await first.check();
    sent.length = 0;
    const ref = { flow: 'fulfilShopifyOrder', source: 'shopify', key: '450789469' };
    const parkedOn = (eventId: string) => ({ eventId, workflowId: eventId, type: 'orders/paid', version: [], failure: 'Resend refused the email' });
    await recordParked(db, ref, parkedOn('e-1'));
    expect((await first.check()).map((alert) => [alert.type, alert.data.eventId])).toEqual([['entity.parked', 'e-1']]);
    expect(await second.check()).toEqual([]);
    expect((sent[0]!.payload as { text: string }).text).toBe(
      'Key parked: fulfilShopifyOrder shopify 450789469 waits on e-1, which failed (Resend refused the email); `durable-webhooks entities retry` or `skip` lets it go on. https://ops.example.com/console/events/e-1',
    );
    await recordParked(db, ref, null);
    expect(await first.check()).toEqual([]);
    await recordParked(db, ref, parkedOn('e-2'));
    failing = true;
    await expect(second.check()).rejects.toThrow('Temporal is unavailable');
    failing = false;
    expect((await second.check()).map((alert) => alert.data.eventId)).toEqual(['e-2']);
    expect(sent).toHaveLength(2);
  });
});

async function deadLettered(db: TestDatabase, id: string, error: string) {
  const receivedAt = new Date().toISOString();
  const start = {
    flow: 'recordEvent',
    input: { source: 'stripe', provider: ProviderKind.STRIPE, id, type: 'invoice.paid', occurredAt: receivedAt, receivedAt },
    summary: id,
  };
  await storeBody(
    db,
    { source: 'stripe', eventId: id, workflowId: id, provider: ProviderKind.STRIPE, via: 'delivery', receivedAt, start, leaseMs: 60_000 },
    { raw: Buffer.from(`{"id":"${id}"}`), contentType: 'application/json', signatureHeaders: {} },
  );
  await deferStart(db, { source: 'stripe', eventId: id }, error, 0, true);
}

describe('alerts through our delivery', () => {
  let stack: WorkerStack;
  let slack: Awaited<ReturnType<typeof startEndpointServer>>;
  beforeAll(async () => {
    slack = await startEndpointServer();
    stack = await startStack({ env: { ALERT_SLACK_WEBHOOK_URL: slack.url, ALERT_INTERVAL: '1s', ALLOW_PRIVATE_ENDPOINTS: 'true' } });
  });
  afterAll(async () => {
    await stack?.close();
    await slack?.close();
  });

  it('posts a dead-lettered row to a Slack incoming webhook as {"text": …}, once, with what the sender chose escaped', async () => {
    // An event ID is the sender's text: in Slack, <!channel> would mention everyone.
    await deadLettered(stack.db as TestDatabase, '<!channel>', 'the namespace refused the start');
    await eventually('Slack is posted to', () => slack.received.length > 0);
    expect(JSON.parse(slack.received[0]!.body)).toEqual({
      text: expect.stringMatching(/^Dead-lettered: 1 event\(s\) not started \(stripe &lt;!channel&gt;; the first because: the namespace refused the start\)/),
    });
    // The next checks find it alerted.
    const { rows } = await stack.db.query('SELECT 1 FROM alerted_dead_letters WHERE event_id = $1', ['<!channel>']);
    expect(rows).toHaveLength(1);
    expect(slack.received).toHaveLength(1);
  });
});
