import { existsSync } from 'node:fs';
import path from 'node:path';
import { codeBlocks, headingAnchors, links } from '../support/markdown';
import { PROVIDERS } from '../../src/providers/index';
import { variablesTheCodeReads } from '../support/environment';
import { PAGES, read } from '../support/pages';
import { ROOT, runCli } from '../support/processes';
import { SCREENSHOTS, SCREENSHOTS_DIR } from '../support/console-screenshots';

/**
 * The documentation against the code: every link and anchor resolves, every environment variable
 * the code reads is on the configuration page and every one there is read, and every command the
 * README shows exists.
 */

/** The names in the first column of the configuration page's table. */
function variablesDocumented(): Set<string> {
  const names = new Set<string>();
  for (const line of read('docs/configuration.md').split('\n')) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1];
    for (const match of first?.matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g) ?? []) names.add(match[1]!);
  }
  return names;
}

describe('the documentation', () => {
  it.each(PAGES)('%s: every relative link and #anchor resolves', (page) => {
    const broken: string[] = [];
    for (const { target, line } of links(read(page))) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file ? path.normalize(path.join(path.dirname(page), file)) : page;
      if (!existsSync(path.join(ROOT, resolved))) broken.push(`line ${line}: ${target} (no ${resolved})`);
      else if (anchor !== undefined && !headingAnchors(read(resolved)).has(anchor))
        broken.push(`line ${line}: ${target} (no heading #${anchor} in ${resolved})`);
    }
    expect(broken).toEqual([]);
  });

  it('shows every console screenshot `npm run screenshots` makes, and each exists', () => {
    const page = read('docs/console.md');
    for (const name of SCREENSHOTS) {
      expect(page).toContain(`](console/${name}.png)`);
      expect(existsSync(path.join(SCREENSHOTS_DIR, `${name}.png`))).toBe(true);
    }
  });

  it("shows the keyed flow's declaration and frame in docs/entities.md as workflows/ has them, and the orders as contracts/ declares them", () => {
    const [example] = codeBlocks(read('docs/entities.md')).filter((block) => block.lang === 'ts');
    const squeezed = (text: string) => text.replace(/\s+/g, '');
    const flow = squeezed(read('workflows/fulfil-shopify-order.ts'));
    const declared = example!.text.split('\n').filter((line) => /^\s*(key|handles):/.test(line));
    expect(declared).toHaveLength(2);
    for (const line of declared) expect(flow).toContain(squeezed(line));
    expect(example!.text).toContain('}, fulfilShopifyOrderFlow);');
    expect(flow).toMatch(/returnhandleEvent\(event,async\(progress\)=>\{.*\},fulfilShopifyOrderFlow,?\);/);
    expect(read('contracts/entities.ts')).toContain("export type EntityOrder = 'serial' | 'latest' | 'coalesce';");
    expect(read('docs/entities.md')).toMatch(/- `serial`: [^]*- `latest`: [^]*- `coalesce`, with `quiet` and `ceiling`/);
  });

  it('indexes every page of docs/', () => {
    const index = read('docs/README.md');
    for (const page of PAGES.filter((file) => file.startsWith('docs/') && file !== 'docs/README.md')) expect(index).toContain(`](${path.basename(page)})`);
  });

  it('keeps the README a front page of about 12 KB at most', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(12 * 1024);
  });

  it('documents every environment variable the code reads on the configuration page, and only those', () => {
    const readByCode = variablesTheCodeReads();
    const documented = variablesDocumented();
    // A provider kind's own variables are declared with it, and `durable-webhooks providers` lists them.
    const declared = new Set(
      PROVIDERS.flatMap(({ builtIn }) => (builtIn ? [builtIn.secretEnv, builtIn.publicKeyEnv, builtIn.urlEnv].filter((name) => name !== undefined) : [])),
    );
    expect([...readByCode].filter((name) => !documented.has(name) && !declared.has(name)).sort()).toEqual([]);
    expect([...documented].filter((name) => !readByCode.has(name)).sort()).toEqual([]);
  });

  it("shows only real npm scripts and durable-webhooks commands in the README's sh blocks", async () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    const help = async (args: string[]) => {
      const { code, output } = await runCli([...args, '--help']);
      expect(code).toBe(0);
      const commands = output.split('Commands:')[1] ?? '';
      return new Set([...commands.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!));
    };
    const topLevel = await help([]);
    const lines = codeBlocks(read('README.md'))
      .filter((block) => block.lang === 'sh')
      .flatMap((block) => block.text.split('\n'))
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter(Boolean);
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      for (const command of line.split('&&').map((part) => part.trim().split(/\s+/))) {
        const [tool, first, second] = command;
        if (tool === 'npm' && first === 'run')
          expect({ command: command.join(' '), known: second! in scripts }).toEqual({ command: command.join(' '), known: true });
        else if (tool === 'npm') expect(['install', 'test', 'ci']).toContain(first);
        // A sample's JSON file, written for the next command to send.
        else if (tool === 'echo') expect(command.slice(-2)).toEqual(['>', expect.stringMatching(/^\w+\.json$/)]);
        else {
          expect([tool, first]).toEqual(['npx', 'durable-webhooks']);
          if (second === '--help') continue;
          expect(topLevel).toContain(second);
          const next = command[3];
          if (next && !next.startsWith('-')) {
            const subcommands = await help([second!]);
            if (subcommands.size > 0) expect(subcommands).toContain(next);
          }
        }
      }
    }
  });
});
