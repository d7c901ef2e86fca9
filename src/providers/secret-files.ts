import { unwatchFile, watchFile } from 'node:fs';
import { readSecretFile } from './secret-values';
import type { SourceConfig } from './source';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';
import type { SourceRegistry } from './registry';

/** How often a secret file is looked at. */
const CHECK_INTERVAL_MS = 5_000;

/**
 * Re-reads each source's secret file (`<NAME>_FILE`, as Kubernetes mounts a Secret) when it
 * changes, without a restart: the new value becomes the current secret, and the one it replaces is
 * still accepted for `graceMs` (SECRET_ROTATION_GRACE), so deliveries the provider signed before it
 * switched keep verifying; `webhook_signature_verifications_total{secret="previous"}` shows when
 * none does any more. A `_PREVIOUS` secret set beside it stays accepted throughout. A value that
 * does not make a valid source (empty, mid-write, not the kind's format) is logged and ignored.
 */
export class SecretFileWatcher {
  private readonly configs = new Map<string, SourceConfig>();
  private readonly expiries = new Set<NodeJS.Timeout>();
  private readonly watched: string[] = [];

  constructor(
    private readonly registry: SourceRegistry,
    configs: readonly SourceConfig[],
    private readonly options: { graceMs: number; logger: Logger; intervalMs?: number },
  ) {
    for (const config of configs) if (config.secretFile) this.configs.set(config.name, config);
  }

  start(): void {
    for (const config of this.configs.values()) {
      const { path } = config.secretFile!;
      // Polled by path, so the atomic swap of a mounted Secret's symlinks is seen as a change.
      watchFile(path, { interval: this.options.intervalMs ?? CHECK_INTERVAL_MS, persistent: false }, () => this.reload(config.name));
      this.watched.push(path);
    }
  }

  /** Reads the source's secret file again, and rotates to its value if it changed. */
  reload(name: string): void {
    const config = this.configs.get(name)!;
    const { env, path, publicKey } = config.secretFile!;
    const keys = publicKey ? config.publicKeys : config.secrets;
    let value: string;
    try {
      value = readSecretFile(path, `${env}_FILE`);
    } catch (error) {
      this.options.logger.warn({ source: name, error: errorLine(error) }, 'the secret file could not be read; the current secret stays');
      return;
    }
    if (value === '' || value === keys[0]) return;
    const replaced = keys[0]!;
    const rotated = this.withKeys(config, [value, ...keys]);
    try {
      this.registry.replace(rotated);
    } catch (error) {
      this.options.logger.warn({ source: name, error: errorLine(error) }, 'the secret file holds a value this source cannot use; the current secret stays');
      return;
    }
    this.configs.set(name, rotated);
    this.options.logger.info(
      { source: name, graceSeconds: Math.round(this.options.graceMs / 1000) },
      `${env} rotated from its file; the previous one is accepted for the grace period`,
    );
    const expiry = setTimeout(() => {
      this.expiries.delete(expiry);
      const current = this.configs.get(name)!;
      const without = this.withKeys(
        current,
        (publicKey ? current.publicKeys : current.secrets).filter((key) => key !== replaced),
      );
      this.registry.replace(without);
      this.configs.set(name, without);
      this.options.logger.info({ source: name }, `${env}'s previous value is no longer accepted: its grace period ended`);
    }, this.options.graceMs).unref();
    this.expiries.add(expiry);
  }

  stop(): void {
    for (const path of this.watched) unwatchFile(path);
    for (const expiry of this.expiries) clearTimeout(expiry);
    this.expiries.clear();
  }

  private withKeys(config: SourceConfig, keys: string[]): SourceConfig {
    const unique = [...new Set(keys)];
    return config.secretFile!.publicKey ? { ...config, publicKeys: unique } : { ...config, secrets: unique };
  }
}
