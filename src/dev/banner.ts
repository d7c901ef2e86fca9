import { DEVELOPMENT_ADMIN_TOKEN, type ReceiverConfig } from '../config';

export interface BannerInput {
  config: ReceiverConfig;
  receiverUrl: string;
  temporalAddress: string;
  namespace: string;
  /** Set when this process started the dev server. */
  devServer?: { uiUrl: string; dbFile: string };
  /** What the activities call: live APIs or local stand-ins. */
  downstream: string[];
}

/** How to turn on scheduled reconciliation for each provider, or what it still needs. */
function reconcileLines({ stripe, github, paddle, square }: ReceiverConfig): string[] {
  const command = (provider: string) => `npx durable-webhooks reconcile enable ${provider} --every 15m --lookback 72h`;
  return [
    `  Reconcile    ${stripe.secretKey ? command('stripe') : "stripe: set STRIPE_SECRET_KEY to catch up from Stripe's Events API"}`,
    `               ${github.token && github.hooks.length > 0 ? command('github') : `github: set ${[!github.token && 'GITHUB_TOKEN', github.hooks.length === 0 && 'GITHUB_HOOKS'].filter(Boolean).join(' and ')} to catch up from GitHub's deliveries`}`,
    `               ${paddle.apiKey ? command('paddle') : "paddle: set PADDLE_API_KEY to catch up from Paddle's events API"}`,
    `               ${square.token ? command('square') : "square: set SQUARE_ACCESS_TOKEN to catch up from Square's Events API"}`,
  ];
}

/** What runs where, the development secrets in use, and how to send a first event. */
export function banner({ config, receiverUrl, temporalAddress, namespace, devServer, downstream }: BannerInput): string {
  const lines = [
    '',
    'durable-webhooks is running',
    '',
    `  Receiver     ${receiverUrl}   (POST /webhooks/${config.sources.length === 1 ? config.sources[0]!.name : `{${config.sources.map((s) => s.name).join(',')}}`})`,
    `  Worker       task queue "${config.taskQueue}"`,
    devServer
      ? `  Temporal     ${temporalAddress} (dev server, namespace "${namespace}", data in ${devServer.dbFile})`
      : `  Temporal     ${temporalAddress} (namespace "${namespace}", already running)`,
  ];
  if (devServer) lines.push(`  Temporal UI  ${devServer.uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows`);
  lines.push(...downstream.map((line) => `  ${line}`));
  lines.push(
    `  Our API      ${config.apiTokens.length ? `${receiverUrl}/v1 (Authorization: Bearer <one of API_TOKENS>)` : 'off (set API_TOKENS to turn on /v1)'}`,
  );
  // Without ADMIN_TOKEN, the public development token stands in: printed, like the development secrets.
  const token = config.adminTokens.some(({ token }) => token === DEVELOPMENT_ADMIN_TOKEN) ? DEVELOPMENT_ADMIN_TOKEN : '$ADMIN_TOKEN';
  lines.push(
    `  Admin API    ${config.adminTokens.length > 0 ? `${receiverUrl}/admin (Authorization: Bearer ${token})` : 'off (set ADMIN_TOKEN to turn on /admin)'}`,
  );
  lines.push(`  Console      ${config.console.enabled ? `${receiverUrl}/console (sign in with ${token})` : 'off (CONSOLE=off, or no admin or viewer token)'}`);
  lines.push(...reconcileLines(config));
  if (config.developmentSecrets.length > 0) {
    lines.push('', '  Development signing secrets (set these variables to use your own):');
    for (const secret of config.developmentSecrets) lines.push(`    ${secret.env}=${secret.value}`);
  }
  lines.push(
    '',
    '  Send a signed test event five times; the first is started, the rest are duplicates:',
    '    npx durable-webhooks send stripe checkout.session.completed --repeat 5',
    '  Then look at it by event ID:  npx durable-webhooks events list   ·   npx durable-webhooks events show <eventId>',
    '  Forward real Stripe test events:',
    `    stripe listen --forward-to ${receiverUrl}/webhooks/stripe`,
    '',
    '  Press Ctrl-C to stop.',
    '',
  );
  return lines.join('\n');
}
