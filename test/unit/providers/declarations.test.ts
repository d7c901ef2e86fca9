import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ProviderKind } from '../../../contracts';
import { loadReceiverConfig } from '../../../src/config';
import { listProviders } from '../../../src/cli/providers';
import { PROVIDERS } from '../../../src/providers/index';
import { ROOT } from '../../support/processes';

/**
 * The provider kinds are declared once (`defineProvider`, listed in src/providers/index.ts); the
 * kind literals the workflow sandbox reads (contracts/), the built-in sources, the development
 * secrets, `send`'s samples and its help, and `durable-webhooks providers` all follow that list.
 */
describe('the declared provider kinds', () => {
  it('are exactly the kinds of contracts/ ProviderKind, each declared once', () => {
    expect(PROVIDERS.map((provider) => provider.kind).sort()).toEqual(Object.values(ProviderKind).sort());
  });

  it('each have a built-in source in development, with its development secret, but hmac', () => {
    const { sources, developmentSecrets } = loadReceiverConfig({}, { development: true });
    for (const provider of PROVIDERS) {
      if (!provider.builtIn) {
        expect(provider.kind).toBe(ProviderKind.HMAC);
        continue;
      }
      expect(sources.find((source) => source.name === provider.builtIn!.name)).toMatchObject({ kind: provider.kind });
      expect(developmentSecrets).toContainEqual({ env: provider.builtIn.secretEnv, value: provider.builtIn.developmentSecret });
      expect(Object.keys(provider.samples).length).toBeGreaterThan(0);
    }
  });

  it("are what send's help and durable-webhooks providers list", () => {
    const cli = (...args: string[]) =>
      execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/index.ts'), ...args], { cwd: ROOT, encoding: 'utf8' }).replace(/\s+/g, ' ');
    const help = cli('send', '--help');
    const listed = cli('providers');
    for (const provider of PROVIDERS) {
      expect(listed).toContain(`${provider.kind}: ${provider.description}`);
      if (!provider.builtIn) continue;
      expect(help).toContain(`${provider.builtIn.name},`);
      for (const type of Object.keys(provider.samples)) expect(help).toContain(`${provider.builtIn.name} ${type}`);
    }
    expect(listProviders().map((provider) => provider.kind)).toEqual(PROVIDERS.map((provider) => provider.kind));
  });
});
