import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { FailureType } from '../../contracts';
import { EventOperations } from '../../src/temporal/operations';
import { orderCreated } from '../support/events';
import { startMailpit } from '../support/mailpit';
import { startRejectingSmtp } from '../support/rejecting-smtp';
import { githubHeaders, SECRETS } from '../support/signing';
import { GO_TOOL_BUILD_MS } from '../support/go-tools';
import { post, startStack, type WorkerStack } from '../support/stack';

/** EMAIL_PROVIDER=smtp through nodemailer to a real SMTP server (Mailpit). */
let mailpit: Awaited<ReturnType<typeof startMailpit>>;
let stack: WorkerStack;
beforeAll(async () => {
  mailpit = await startMailpit();
  stack = await startStack({ env: { EMAIL_PROVIDER: 'smtp', SMTP_URL: mailpit.smtpUrl, EMAIL_FROM: 'Shop <shop@example.com>' } });
}, GO_TOOL_BUILD_MS);
afterAll(async () => {
  await stack?.close();
  await mailpit?.stop();
});

it('sends one email with a Message-ID made from the event ID, through duplicates and a reset', async () => {
  const delivery = randomUUID();
  const body = JSON.stringify({ zen: 'Anything added dilutes everything else.', hook_id: 42, repository: { full_name: 'o/r' } });
  const headers = await githubHeaders(body, SECRETS.github, { delivery, event: 'ping' });
  await post(`${stack.url}/webhooks/github`, headers, body);
  await post(`${stack.url}/webhooks/github`, headers, body);
  expect(await stack.client.workflow.getHandle(delivery).result()).toMatchObject({ outcome: 'notified' });

  const { runId: newRunId } = await new EventOperations(stack.client, { uiUrl: 'http://ui' }).reset(delivery, 'first', 'test: reset after SMTP send');
  expect(await stack.client.workflow.getHandle(delivery, newRunId).result()).toMatchObject({ outcome: 'notified' });

  const messages = (await mailpit.messages()).filter((message) => message.MessageID === `${delivery}@durable-webhooks`);
  expect(messages).toHaveLength(1);
  expect(messages[0]).toMatchObject({ Subject: '[o/r] webhook 42 connected', To: [{ Address: 'ops@example.com' }] });
});

it("turns a server's refusal of the recipient into a permanent failure that does not name the address", async () => {
  const marker = `smtp${randomUUID().slice(0, 8)}`;
  const server = await startRejectingSmtp((address) => address.includes(marker));
  const rejecting = await startStack({ env: { EMAIL_PROVIDER: 'smtp', SMTP_URL: server.smtpUrl, EMAIL_FROM: 'Shop <shop@example.com>' } });
  try {
    const order = orderCreated({ email: `${marker}@example.com` });
    expect((await post(`${rejecting.url}/webhooks/${order.path}`, order.headers, order.body)).status).toBe(202);
    const failed = await rejecting.client.workflow
      .getHandle(order.id)
      .result()
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    const cause = (failed as WorkflowFailedError).cause?.cause as ApplicationFailure;
    expect(cause).toMatchObject({ type: FailureType.EMAIL_REJECTED, nonRetryable: true, message: 'The SMTP server refused the email: 550 5.1.1 (EENVELOPE).' });
    // Refused once: not retried for a day, quoting the address each time.
    expect(server.refused).toEqual([`${marker}@example.com`]);
    const { events } = await rejecting.client.workflow.getHandle(order.id).fetchHistory();
    expect(JSON.stringify(events)).not.toContain(marker);
  } finally {
    await rejecting.close();
    await server.close();
  }
});
