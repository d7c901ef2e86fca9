import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A new temporary folder that other users may pass through (0711: not list, not write): as root,
 * the embedded PostgreSQL under it runs as `postgres`, which must reach its own folder, and opens no
 * folder above it by itself.
 */
export function passableTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  chmodSync(dir, 0o711);
  return dir;
}
