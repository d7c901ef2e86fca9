import type { SourceConfig } from '../config/sources';
import { ConfigError, UnknownSourceError } from '../errors';
import { createAdyenAdapter } from './adyen';
import { createGitHubAdapter } from './github';
import { createHmacAdapter } from './hmac';
import { createLinearAdapter } from './linear';
import { createPaddleAdapter } from './paddle';
import { createSendGridAdapter } from './sendgrid';
import { createShopifyAdapter } from './shopify';
import { createSlackAdapter } from './slack';
import { createSquareAdapter } from './square';
import { createStandardWebhooksAdapter } from './standard-webhooks';
import { createStripeAdapter } from './stripe';
import { createTwilioAdapter } from './twilio';
import { ProviderKind } from '../../contracts';
import { Router } from '../flows';
import type { ProviderAdapter } from './types';

/** A configured source with its adapter, and the routes from its event types to flows. */
export interface Source {
  name: string;
  workflowIdPrefix: string;
  adapter: ProviderAdapter;
  router: Router;
}

/** The source a configuration declares, built: its adapter (keys checked) and its router. */
export function createSource(config: SourceConfig): Source {
  return { name: config.name, workflowIdPrefix: config.workflowIdPrefix, adapter: createAdapter(config), router: new Router(config.kind, config.routes) };
}

export function createAdapter(config: SourceConfig): ProviderAdapter {
  const options = { source: config.name, secrets: config.secrets };
  switch (config.kind) {
    case ProviderKind.STRIPE:
      return createStripeAdapter(options);
    case ProviderKind.GITHUB:
      return createGitHubAdapter(options);
    case ProviderKind.STANDARD_WEBHOOKS:
      return createStandardWebhooksAdapter({ ...options, publicKeys: config.publicKeys });
    case ProviderKind.SVIX:
      return createStandardWebhooksAdapter({ ...options, publicKeys: config.publicKeys, flavour: 'svix' });
    case ProviderKind.SHOPIFY:
      return createShopifyAdapter(options);
    case ProviderKind.PADDLE:
      return createPaddleAdapter(options);
    case ProviderKind.SQUARE:
      return createSquareAdapter({ ...options, url: requireUrl(config) });
    case ProviderKind.SLACK:
      return createSlackAdapter(options);
    case ProviderKind.LINEAR:
      return createLinearAdapter(options);
    case ProviderKind.TWILIO:
      return createTwilioAdapter({ ...options, url: requireUrl(config) });
    case ProviderKind.SENDGRID:
      return createSendGridAdapter({ source: config.name, publicKeys: config.publicKeys });
    case ProviderKind.ADYEN:
      return createAdyenAdapter(options);
    case ProviderKind.HMAC:
      if (!config.hmac) throw new ConfigError(`Source "${config.name}": an hmac source declares its "signature", "id" and "type".`);
      return createHmacAdapter({ ...options, spec: config.hmac });
  }
}

/** The public URL a URL-signing provider (Square, Twilio) signs, as configured. */
function requireUrl(config: SourceConfig): string {
  if (!config.url) throw new ConfigError(`Source "${config.name}": ${config.kind} signs its notification URL; set the public URL it posts to.`);
  return config.url;
}

/** The configured sources by name; adapters are built (and their keys checked) once, at start-up. */
export class SourceRegistry {
  private readonly sources: ReadonlyMap<string, Source>;

  constructor(configs: readonly SourceConfig[]) {
    this.sources = new Map(configs.map((config) => [config.name, createSource(config)]));
  }

  /** @throws UnknownSourceError */
  get(name: string): Source {
    const source = this.sources.get(name);
    if (!source) throw new UnknownSourceError(name);
    return source;
  }
}
