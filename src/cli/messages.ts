import { Command } from 'commander';
import { loadCommonConfig } from '../config';
import { redeliverMessage } from '../outbound/messages';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { jsonOption, print } from './output';

/** `durable-webhooks messages …`: messages published through `POST /v1/messages`. */
export function messagesCommand(): Command {
  const messages = new Command('messages').description('Messages published through our /v1 API.');
  messages
    .command('redeliver')
    .argument('<messageId>')
    .option('--endpoint <endpointId>', 'only to this endpoint (default: every endpoint of the message)')
    .addOption(jsonOption())
    .description('Start a fresh delivery of a message, on the full retry schedule, with the same webhook-id.')
    .action(async (messageId: string, options: { endpoint?: string; json?: boolean }) => {
      const config = loadCommonConfig();
      const client = lazyClient(temporalSettings());
      const deliveries = await redeliverMessage(client, { taskQueue: config.taskQueue, scheduleMs: config.deliveryScheduleMs }, messageId, options.endpoint);
      print(options.json, { messageId, deliveries }, () => deliveries.map((workflowId) => `Redelivering ${messageId}: ${workflowId}`).join('\n'));
    });
  return messages;
}
