import type { SourceConfig } from './source';
import { UnknownSourceError } from '../core/delivery-errors';
import { Router } from '../flows';
import { providerOf } from './index';
import type { ProviderAdapter } from './types';

/** A configured source with its adapter, and the routes from its event types to flows. */
export interface Source {
  name: string;
  workflowIdPrefix: string;
  adapter: ProviderAdapter;
  router: Router;
  /** Its largest body, in bytes: its own setting, else its kind's (before `MAX_BODY_BYTES` caps it). */
  maxBodyBytes: number;
  /**
   * With more than one secret or key (a rotation), the adapter of the current ones alone: a delivery
   * it accepts was signed with the current secret, else with a previous one (counted apart).
   */
  currentOnly?: ProviderAdapter;
}

/** The source a configuration declares, built: its adapter (keys checked) and its router. */
export function createSource(config: SourceConfig): Source {
  return {
    name: config.name,
    workflowIdPrefix: config.workflowIdPrefix,
    adapter: createAdapter(config),
    router: new Router(config.kind, config.routes),
    maxBodyBytes: config.maxBodyBytes ?? providerOf(config.kind).maxBodyBytes,
    ...((config.secrets.length > 1 || config.publicKeys.length > 1) && {
      currentOnly: createAdapter({ ...config, secrets: config.secrets.slice(0, 1), publicKeys: config.publicKeys.slice(0, 1) }),
    }),
  };
}

/** The adapter of a configured source, as its kind's declaration builds it (src/providers/index.ts). */
export function createAdapter(config: SourceConfig): ProviderAdapter {
  return providerOf(config.kind).create(config);
}

/** The configured sources by name; adapters are built (and their keys checked) at start-up, and again when a secret changes (`replace`). */
export class SourceRegistry {
  private readonly sources: Map<string, Source>;

  constructor(configs: readonly SourceConfig[]) {
    this.sources = new Map(configs.map((config) => [config.name, createSource(config)]));
  }

  /** Builds the source again from its new configuration (its secrets rotated); deliveries after this use it. */
  replace(config: SourceConfig): void {
    this.sources.set(config.name, createSource(config));
  }

  /** @throws UnknownSourceError */
  get(name: string): Source {
    const source = this.sources.get(name);
    if (!source) throw new UnknownSourceError({ source: name });
    return source;
  }
}
