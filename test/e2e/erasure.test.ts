import { randomUUID } from 'node:crypto';
import { orderCreated } from '../support/events';
import { eventually } from '../support/eventually';
import { rowsHolding, temporalText } from '../support/leaks';
import { startOtlpReceiver } from '../support/otlp-receiver';
import { freePort } from '../support/ports';
import { runCli, spawnNpmScript, type Spawned } from '../support/processes';
import { startRejectingSmtp } from '../support/rejecting-smtp';
import { githubHeaders, SECRETS, SECRETS_ENV } from '../support/signing';
import { post, startStack, type WorkerStack } from '../support/stack';

/**
 * Erasure reaches everywhere: one marker in a customer's email address, in a GitHub login (the
 * owner of a user's repository, and the issue's author), and in an SMTP server's refusal of that
 * address (quoted as Postfix does). `npm run receiver` and `npm run worker` run as in production,
 * tracing to a local OTLP receiver. Once both events are erased, the marker is in no table, nowhere
 * in Temporal (every run's payloads, failures, summary, details, current details), in no line either
 * process wrote and in no exported span.
 */
const MARKER = `gdpr${randomUUID().replace(/-/g, '').slice(0, 12)}`;
let stack: WorkerStack;
let smtp: Awaited<ReturnType<typeof startRejectingSmtp>>;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let receiver: Spawned;
let worker: Spawned;
let receiverUrl: string;

beforeAll(async () => {
  smtp = await startRejectingSmtp((address) => address.includes(MARKER));
  stack = await startStack({ worker: 'external', env: { EMAIL_PROVIDER: 'smtp', SMTP_URL: smtp.smtpUrl, EMAIL_FROM: 'Shop <shop@example.com>' } });
  otlp = await startOtlpReceiver();
  const port = await freePort();
  receiverUrl = `http://localhost:${port}`;
  const env = {
    ...stack.workerEnv,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    NODE_ENV: undefined,
  };
  worker = spawnNpmScript('worker', env);
  receiver = spawnNpmScript('receiver', { ...env, ...SECRETS_ENV, PORT: String(port) });
  await Promise.all([worker.waitFor('worker polling'), receiver.waitFor('receiver listening')]);
});

afterAll(async () => {
  for (const process of [receiver, worker]) {
    process?.child.kill('SIGTERM');
    await process?.exited;
  }
  await stack?.close();
  await otlp?.close();
  await smtp?.close();
});

it('leaves the marker in no table, nowhere in Temporal, in no log line and in no span once the events are erased', async () => {
  const order = orderCreated({ email: `${MARKER}@example.com`, name: `Ada ${MARKER}` });
  const issue = JSON.stringify({
    action: 'opened',
    issue: { number: 12, title: 'Refund please', html_url: `https://github.com/${MARKER}/shop/issues/12`, user: { login: MARKER, type: 'User' } },
    repository: { id: 4242, full_name: `${MARKER}/shop`, owner: { login: MARKER, type: 'User' } },
    sender: { login: MARKER },
  });
  const delivery = randomUUID();
  const github = { id: delivery, path: 'github', body: issue, headers: await githubHeaders(issue, SECRETS.github, { delivery, event: 'issues' }) };
  for (const event of [order, github]) expect((await post(`${receiverUrl}/webhooks/${event.path}`, event.headers, event.body)).status).toBe(202);

  // The order is charged, then its receipt is refused by the SMTP server: a permanent failure, once.
  await eventually(
    'the order workflow has failed',
    async () =>
      (
        await stack.client.workflow
          .getHandle(order.id)
          .describe()
          .catch(() => undefined)
      )?.status.name === 'FAILED',
  );
  expect(smtp.refused).toEqual([`${MARKER}@example.com`]);
  await eventually('the GitHub notification is sent', () => smtp.accepted.includes('ops@example.com'));
  await eventually(
    'the GitHub workflow has completed',
    async () =>
      (
        await stack.client.workflow
          .getHandle(delivery)
          .describe()
          .catch(() => undefined)
      )?.status.name === 'COMPLETED',
  );
  await eventually("both emails' spans are exported", () => otlp.spans.filter((span) => span.name === 'RunActivity:sendEmail').length >= 2);

  // Before erasing, only the body store and the order row hold it.
  expect((await rowsHolding(stack.db, MARKER)).map((row) => row.split(':')[0]).sort()).toEqual(['event_bodies', 'event_bodies', 'orders']);

  for (const id of [order.id, delivery]) {
    const erased = await runCli(['events', 'erase', id, '--reason', 'GDPR request 45', '--json'], stack.workerEnv);
    expect(erased.code).toBe(0);
    expect(JSON.parse(erased.output)).toMatchObject({ erasedNow: true, temporal: 'holds no personal data' });
  }

  expect(await rowsHolding(stack.db, MARKER)).toEqual([]);
  for (const id of [order.id, delivery]) expect(await temporalText(stack.client, id)).not.toContain(MARKER);

  for (const process of [receiver, worker]) {
    process.child.kill('SIGTERM');
    await process.exited;
  }
  const logs = receiver.output() + worker.output();
  expect(logs).toContain(order.id);
  expect(logs).toContain('The SMTP server refused the email: 550 5.1.1 (EENVELOPE).');
  expect(logs).not.toContain(MARKER);
  expect(otlp.exported.length).toBeGreaterThan(0);
  expect(otlp.exported.join('\n')).toContain(order.id);
  expect(otlp.exported.join('\n')).not.toContain(MARKER);
});
