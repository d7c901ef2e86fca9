import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes';

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Every file of the shipped code, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
  );
}

/**
 * The variables the code reads: `env.NAME`, `env['NAME']`, a helper given `(env, 'NAME'`, and the
 * built-in sources' `secretEnv`/`publicKeyEnv`/`urlEnv`. Temporal's connection variables are read
 * by `@temporalio/envconfig`, as the `temporal` CLI reads them.
 */
export function variablesTheCodeReads(): Set<string> {
  const names = new Set(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_API_KEY', 'TEMPORAL_PROFILE', 'TEMPORAL_TLS_*']);
  const patterns = [
    /\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g,
    /\(env, '([A-Z][A-Z0-9_]+)'/g,
    /(?:secretEnv|publicKeyEnv|urlEnv): '([A-Z][A-Z0-9_]+)'/g,
  ];
  for (const file of ['src', 'activities'].flatMap(sourceFiles)) {
    const text = read(file);
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1] ?? match[2]!);
  }
  return names;
}
