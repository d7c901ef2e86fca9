import type { ProviderKind } from '../../contracts';
import type { Routes } from '../flows';

/** One webhook source: `POST /webhooks/<name>`, verified as its provider kind. */
export interface SourceConfig {
  name: string;
  kind: ProviderKind;
  /** Signing secrets, each taken whole; every one is accepted, the first signs (rotation). */
  secrets: string[];
  /** Standard Webhooks `whpk_` ed25519 public keys for `v1a` signatures. */
  publicKeys: string[];
  /** Put before the event ID to make the workflow ID; empty for the built-in sources. */
  workflowIdPrefix: string;
  /** A Stripe source's own API key (from its `apiKeyEnv`), for `backfill stripe --source`. */
  apiKey?: string;
  /** The public URL a URL-signing provider (Square, Twilio, an `hmac` source signing `{url}`) posts to and signs. */
  url?: string;
  /** How an `hmac` source signs, and where its event ID and type are. */
  hmac?: HmacSpec;
  /** Its event types (or `prefix*`) to flows, over the kind's defaults. */
  routes?: Routes;
  /** Its standing rate: workflow starts per second, across every receiver and worker (`rate: 50/s`). */
  rate?: number;
  /** Its largest body, in bytes, over its kind's (`defineProvider`'s `maxBodyBytes`); `MAX_BODY_BYTES` caps it. */
  maxBodyBytes?: number;
  /**
   * The file its current secret (or key) was read from (`<NAME>_FILE`), which the receiver re-reads
   * when it changes (a Kubernetes Secret mounted as files): `secrets[0]` (or `publicKeys[0]` for a
   * kind whose key is public) is that file's value.
   */
  secretFile?: { env: string; path: string; publicKey: boolean };
}

/** Where a value is read: a header (the signature covers it only if `signed` says so), or a JSON pointer into the signed body. */
export type FieldSource = { header: string } | { pointer: string };

/**
 * The generic `hmac` kind: how a sender of the long tail signs, declared in WEBHOOKS_CONFIG with
 * every field named after what it means (Hookdeck and Convoy declare sources the same way).
 */
export interface HmacSpec {
  /** The header carrying the signature (lower-case). */
  header: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  /** Text before the signature in the header, such as `sha256=`. @default '' */
  prefix: string;
  /** What is signed: `{body}`, `{timestamp}.{body}`, `{url}{body}`, or another arrangement of those three. */
  signed: string;
  /** The header with the signed timestamp (whole seconds), when `signed` has `{timestamp}`. */
  timestampHeader?: string;
  /** How far the signed timestamp may be from the receiver's clock. @default 300 */
  toleranceSeconds: number;
  /** The public URL the sender signs, when `signed` has `{url}`: configuration, never the request's. */
  url?: string;
  /** Where the event ID is. */
  id: FieldSource;
  /** Where the event type is. */
  type: FieldSource;
}
