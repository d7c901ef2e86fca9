import type { ProviderKind } from '../../contracts';
import { isProvider, type ProviderDefinition } from './define';
import * as kinds from './kinds';

/**
 * Every provider kind the receiver verifies, one declaration each (`defineProvider`, in its own
 * file, exported by ./kinds.ts), in that file's order. The registry, the built-in sources, the
 * development secrets, `send`'s samples and `durable-webhooks providers` derive from this list.
 */
export const PROVIDERS: readonly ProviderDefinition[] = Object.values(kinds).filter(isProvider);

const byKind: ReadonlyMap<string, ProviderDefinition> = new Map(PROVIDERS.map((provider) => [provider.kind, provider]));

/** The declaration of a kind; every value of `ProviderKind` has one (a test holds the two lists equal). */
export function providerOf(kind: ProviderKind): ProviderDefinition {
  const provider = byKind.get(kind);
  if (!provider) throw new Error(`No provider declares the kind "${kind}"; add it to src/providers/index.ts.`);
  return provider;
}
