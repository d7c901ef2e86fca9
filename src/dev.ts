import './core/compile-cache';
import { Connection } from '@temporalio/client';
import { handOff } from './dev/handoff';
import { startStripeStandIn, STRIPE_STAND_IN_KEY } from './dev/stripe-stand-in';
import { loadReceiverConfig, loadWorkerConfig } from './config';
import { banner } from './dev/banner';
import { endOfLifeWarning } from './dev/node-support';
import { startDevServer, type DevServer } from './dev/dev-server';
import { isLoopback, isServing } from './temporal/server-process';
import { createLogger } from './core/logger';
import { startReceiver } from './receiver';
import { RetentionPurger } from './intake/retention';
import { StartSweeper } from './intake/sweeper';
import { createWorkerServices } from './services';
import { lazyClient, temporalSettings } from './temporal/connection';
import { prepareNamespace } from './temporal/namespace';
import { installRuntimeServingMetrics } from './temporal/runtime';
import { currentPrebuiltBundle, startWorker } from './temporal/worker';
import { startTracing } from './core/tracing';

/**
 * `npm run dev`: the Temporal dev server (unless one already answers), the worker and the receiver
 * in one process, with development secrets for any that are unset. Ctrl-C stops all three.
 */
async function main(): Promise<void> {
  // JSON lines like production, or readable ones on a terminal.
  const logging = { pretty: process.stdout.isTTY };
  const logger = createLogger('dev', logging);
  const endOfLife = endOfLifeWarning();
  if (endOfLife) logger.warn(endOfLife);
  const config = loadReceiverConfig(process.env, { development: true, developmentAdminToken: true });
  const workerConfig = loadWorkerConfig(process.env, { development: true });
  await installRuntimeServingMetrics(createLogger('worker', logging), workerConfig.metricsAddress);
  const tracing = startTracing('durable-webhooks');
  const settings = temporalSettings();
  const address = settings.connectionOptions.address!;

  let devServer: DevServer | undefined;
  if (!(await isServing(address))) {
    if (!isLoopback(address)) throw new Error(`Temporal does not answer at ${address}.`);
    logger.info({ address, dataDir: config.dataDir }, 'starting the Temporal dev server');
    // With encryption on, the UI decodes payloads through the receiver's codec endpoint.
    const uiCodecEndpoint =
      settings.dataConverter && (config.codecToken || config.adminTokens.length > 0) ? `http://localhost:${config.port}/codec` : undefined;
    devServer = await startDevServer({ address, dataDir: config.dataDir, stdio: 'ignore', uiCodecEndpoint });
  }

  const setupConnection = await Connection.connect(settings.connectionOptions);
  await prepareNamespace(setupConnection, settings.namespace);
  await setupConnection.close();

  const client = lazyClient(settings);
  const stripeStandIn = workerConfig.stripe.secretKey ? undefined : await startStripeStandIn();
  const services = await createWorkerServices(workerConfig, { temporal: client, embedded: true, stripeStandIn: stripeStandIn?.url });
  const prebuilt = currentPrebuiltBundle(undefined, tracing !== undefined);
  logger.info(
    prebuilt
      ? 'workflows: the bundle npm run build wrote, newer than workflows/ and contracts/'
      : 'workflows: bundling workflows/ (changed since npm run build)',
  );
  const worker = await startWorker({
    settings,
    taskQueue: config.taskQueue,
    activities: services.activities,
    workflows: prebuilt ?? 'bundle-now',
    tracing,
    bodyStore: services.db,
  });
  const sweeper = new StartSweeper(services.db, client, { taskQueue: config.taskQueue, logger: createLogger('worker', logging) });
  await sweeper.start();
  const purger = new RetentionPurger(services.db, workerConfig.retention, createLogger('worker', logging));
  purger.start();

  const receiver = await startReceiver(config, client, createLogger('receiver', logging), services.db, settings.dataConverter?.payloadCodecs?.[0]);
  // The CLI, run while this runs, reaches what it does: its database, its Stripe and its secrets.
  const withdraw = handOff(config.dataDir, {
    ...Object.fromEntries(config.developmentSecrets.map(({ env, value }) => [env, value])),
    ...(services.db.url && { DATABASE_URL: services.db.url }),
    ...(stripeStandIn && { STRIPE_SECRET_KEY: STRIPE_STAND_IN_KEY, STRIPE_API_URL: stripeStandIn.url }),
    PORT: new URL(receiver.url).port,
  });
  process.stdout.write(
    banner({
      config,
      receiverUrl: receiver.url,
      temporalAddress: address,
      namespace: settings.namespace,
      devServer,
      downstream: [
        ...services.describe(),
        payloadsLine(
          Boolean(settings.dataConverter),
          config.codecToken ? 'CODEC_TOKEN' : config.adminTokens.length > 0 ? 'ADMIN_TOKEN' : undefined,
          receiver.url,
        ),
      ],
    }),
  );

  // The SDK's runtime turns SIGINT/SIGTERM into a graceful worker shutdown, which ends it.
  await worker.stopped;
  logger.info('stopping');
  withdraw();
  await receiver.close();
  await sweeper.stop();
  await purger.stop();
  await client.connection.close();
  await services.close();
  await stripeStandIn?.close();
  await devServer?.stop();
  await tracing?.shutdown();
  logger.info('stopped');
}

/** What Temporal holds of each event, and how operators read it. */
function payloadsLine(encrypted: boolean, codecToken: 'CODEC_TOKEN' | 'ADMIN_TOKEN' | undefined, receiverUrl: string): string {
  if (!encrypted) return 'Payloads     plaintext in Temporal (set PAYLOAD_ENCRYPTION_KEYS to encrypt them)';
  return `Payloads     encrypted in Temporal; ${codecToken ? `codec endpoint ${receiverUrl}/codec (Bearer $${codecToken})` : 'set CODEC_TOKEN to serve the codec endpoint'}`;
}

main().catch((error: Error) => {
  createLogger('dev').error(`cannot run: ${error.message}`);
  process.exit(1);
});
