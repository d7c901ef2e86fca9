import { ConfigError } from '../core/errors';
import type { ProviderKind } from '../../contracts';
import type { SourceConfig } from './source';
import type { ProviderAdapter } from './types';

/**
 * The built-in source of a provider kind: `POST /webhooks/<name>`, on when `secretEnv` is set (in
 * development, always, with `developmentSecret`, which is public in this repository).
 */
export interface BuiltInSource {
  name: string;
  /** The variable whose value turns the source on: its signing secret, or (`keyIsPublic`) its verification key. */
  secretEnv: string;
  developmentSecret: string;
  keyIsPublic?: boolean;
  /** A variable with more verification keys beside the secrets (Standard Webhooks' ed25519 `whpk_`). */
  publicKeyEnv?: string;
  /** The variable with the public URL the provider signs (Square, Twilio). */
  urlEnv?: string;
}

/**
 * Everything about one provider kind, in its own file (src/providers/<kind>.ts), as `defineFlow`
 * declares a flow: the registry, the built-in sources, the development secrets, `send`'s samples and
 * `durable-webhooks providers` derive from the list ./kinds.ts exports (docs/add-a-provider.md).
 */
export interface ProviderDefinition {
  kind: ProviderKind;
  /** One line for `durable-webhooks providers` and the docs: who sends it and how it signs. */
  description: string;
  /** Its built-in source; a kind without one (`hmac`) is configured in WEBHOOKS_CONFIG only. */
  builtIn?: BuiltInSource;
  /** The adapter for a configured source of this kind: its secrets, keys and URL checked here. */
  create(config: SourceConfig): ProviderAdapter;
  /** `durable-webhooks send`'s built-in samples by event type: payloads shaped as the provider documents them. */
  samples: Readonly<Record<string, Record<string, unknown>>>;
  /**
   * The largest body a source of this kind accepts, in bytes: far above what the provider sends,
   * and small enough that a refused delivery of this size costs little (docs/security.md lists each
   * kind's). Refused 413 by its Content-Length before a byte is read, and while it is read. A source
   * may set its own (`maxBodyBytes` in WEBHOOKS_CONFIG); `MAX_BODY_BYTES` caps them all.
   */
  maxBodyBytes: number;
  /**
   * JSON pointers into a parsed body (as `parseStoredBody` reads it) to values that name a person
   * under keys the console's general rule does not know (Twilio's `From`, `To` and `Body`): masked
   * for viewers, and for admins until an audited reveal.
   */
  personal?: readonly string[];
  /**
   * Where the provider publishes the addresses it sends webhooks from, for a source's optional
   * allowlist (ADDRESS_ALLOWLISTS): the list's URL (`urlEnv` overrides it) and how to read it.
   */
  publishedAddresses?: { url: string; urlEnv: string; read(list: unknown): string[] };
}

const DECLARED = Symbol('provider');

export function defineProvider(definition: ProviderDefinition): ProviderDefinition {
  return Object.assign(definition, { [DECLARED]: true });
}

/** True for a value `defineProvider` made. */
export function isProvider(value: unknown): value is ProviderDefinition {
  return typeof value === 'object' && value !== null && DECLARED in value;
}

/** The public URL a URL-signing provider signs, as configured. */
export function signedUrl(config: SourceConfig): string {
  if (!config.url) throw new ConfigError(`Source "${config.name}": ${config.kind} signs its notification URL; set the public URL it posts to.`);
  return config.url;
}
