import type { SourceConfig } from '../config';
import { UnknownSourceError } from '../errors';
import { createGitHubAdapter } from './github';
import { createStandardWebhooksAdapter } from './standard-webhooks';
import { createStripeAdapter } from './stripe';
import { ProviderKind } from '../../contracts';
import type { ProviderAdapter } from './types';

/** A configured source with its adapter. */
export interface Source {
  name: string;
  workflowIdPrefix: string;
  adapter: ProviderAdapter;
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
  }
}

/** The configured sources by name; adapters are built (and their keys checked) once, at start-up. */
export class SourceRegistry {
  private readonly sources: ReadonlyMap<string, Source>;

  constructor(configs: readonly SourceConfig[]) {
    this.sources = new Map(
      configs.map((config) => [config.name, { name: config.name, workflowIdPrefix: config.workflowIdPrefix, adapter: createAdapter(config) }]),
    );
  }

  /** @throws UnknownSourceError */
  get(name: string): Source {
    const source = this.sources.get(name);
    if (!source) throw new UnknownSourceError(name);
    return source;
  }
}
