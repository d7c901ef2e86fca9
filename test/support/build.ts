import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** What `npm run build` compiles; scripts/build-if-changed.sh watches the same. */
const SOURCES = ['src', 'activities', 'workflows', 'contracts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

let fresh: boolean | undefined;

/**
 * True when dist/ was built from the sources as they are now (`npm test` builds it first, as
 * scripts/build-if-changed.sh decides): tests may then run its compiled CLI and load its workflow
 * bundle instead of compiling the same sources again in every test file. Decided once per file.
 */
export function distIsFresh(): boolean {
  if (fresh !== undefined) return fresh;
  const stamp = path.join(ROOT, 'dist/.built');
  if (!existsSync(stamp)) return (fresh = false);
  const builtAt = statSync(stamp).mtimeMs;
  const newer = (file: string): boolean => {
    const stats = statSync(file);
    if (stats.mtimeMs > builtAt) return true;
    return stats.isDirectory() && readdirSync(file).some((entry) => newer(path.join(file, entry)));
  };
  return (fresh = !SOURCES.some((source) => newer(path.join(ROOT, source))));
}
