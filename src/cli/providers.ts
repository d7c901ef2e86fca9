import { Command } from 'commander';
import { loadReceiverConfig } from '../config';
import { PROVIDERS } from '../providers/index';
import { createAdapter } from '../providers/registry';
import { jsonOption, print } from './output';

/** One provider kind as `durable-webhooks providers` shows it. */
export interface ProviderListing {
  kind: string;
  description: string;
  /** Its built-in source and the variables that configure it; null for a kind configured in WEBHOOKS_CONFIG only. */
  builtIn: { source: string; variables: string[] } | null;
  /** Where the event ID and type are read, and which of them the provider does not sign. */
  fields: { id: string; type: string; unsigned: string[] };
  batch: boolean;
  /** `durable-webhooks send`'s built-in samples. */
  samples: string[];
}

/** Every declared provider kind (src/providers/index.ts), with what its adapter reads. */
export function listProviders(): ProviderListing[] {
  const { sources } = loadReceiverConfig({}, { development: true });
  return PROVIDERS.map((provider) => {
    const source = provider.builtIn && sources.find((config) => config.name === provider.builtIn!.name);
    const adapter = source ? createAdapter(source) : undefined;
    const { builtIn } = provider;
    return {
      kind: provider.kind,
      description: provider.description,
      builtIn: builtIn
        ? {
            source: builtIn.name,
            variables: [builtIn.secretEnv, ...(builtIn.publicKeyEnv ? [builtIn.publicKeyEnv] : []), ...(builtIn.urlEnv ? [builtIn.urlEnv] : [])],
          }
        : null,
      fields: adapter
        ? { id: adapter.fields.id, type: adapter.fields.type, unsigned: [...(adapter.fields.unsigned ?? [])] }
        : { id: 'as its source declares', type: 'as its source declares', unsigned: [] },
      batch: adapter?.batch ?? false,
      samples: Object.keys(provider.samples),
    };
  });
}

export function providersCommand(): Command {
  return new Command('providers')
    .description(
      'List every provider kind: its built-in source and variables, where its event ID and type come from (and whether they are signed), and its samples for send.',
    )
    .addOption(jsonOption('print the list as JSON'))
    .action((options: { json?: boolean }) => {
      const listing = listProviders();
      print(options.json, listing, () => listing.map(describe).join('\n\n'));
    });
}

function describe(provider: ProviderListing): string {
  const lines = [`${provider.kind}: ${provider.description}`];
  lines.push(
    `  source   ${provider.builtIn ? `/webhooks/${provider.builtIn.source}, on with ${provider.builtIn.variables.join(', ')}` : 'none built in: declare one in WEBHOOKS_CONFIG'}`,
  );
  const unsigned = (field: string) => (provider.fields.unsigned.includes(field) ? ' (not signed)' : '');
  lines.push(`  id       ${provider.fields.id}${unsigned('id')}`, `  type     ${provider.fields.type}${unsigned('type')}`);
  if (provider.batch) lines.push('  batch    one delivery carries many events, each its own workflow');
  if (provider.samples.length) lines.push(`  samples  ${provider.samples.join(', ')}`);
  return lines.join('\n');
}
