import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A new temporary folder that other users may pass through (0711: not list, not write): as root,
 * the embedded PostgreSQL under it runs as `postgres`, which must reach its own folder; under a
 * folder it cannot pass through, the cluster would live under /var/tmp instead, outside the test's.
 */
export function passableTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  chmodSync(dir, 0o711);
  return dir;
}
