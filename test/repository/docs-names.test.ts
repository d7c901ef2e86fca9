import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program';
import { PROVIDERS } from '../../src/providers/index';
import { variablesTheCodeReads } from '../support/environment';
import { codeBlocks } from '../support/markdown';
import { PAGES, read } from '../support/pages';
import { ROOT } from '../support/processes';

/**
 * What the pages name, held to the code: every file path, environment variable, `durable-webhooks`
 * command and option, metric and refusal reason a page names in code (backticks or a code block)
 * exists; and the statements a review found contradicting the code stay out.
 */

/** The code a page shows: its backticked spans and its code blocks, with the line each starts on. */
function codeOf(page: string): Array<{ text: string; line: number }> {
  const markdown = read(page);
  const spans = markdown.split('\n').flatMap((text, index) => [...text.matchAll(/`([^`]+)`/g)].map((match) => ({ text: match[1]!, line: index + 1 })));
  return [...spans, ...codeBlocks(markdown).map((block) => ({ text: block.text, line: block.line }))];
}

/** The variables a page's own WEBHOOKS_CONFIG examples declare (`secretEnv: NAME`, `apiKeyEnv: NAME`, or a list). */
function declaredByExamples(page: string): Set<string> {
  const declared = [...read(page).matchAll(/(?:secretEnv|apiKeyEnv|publicKeyEnv|urlEnv): *\[?([A-Z0-9_, ]+)\]?/g)];
  return new Set(declared.flatMap((match) => match[1]!.split(',').map((name) => name.trim())).filter(Boolean));
}

/** What each page names that `found` picks out of its code, as `page:line name`, where `exists` says no. */
function missing(found: (code: string) => Iterable<string>, exists: (name: string, page: string) => boolean): string[] {
  return PAGES.flatMap((page) =>
    codeOf(page).flatMap(({ text, line }) => [...found(text)].filter((name) => !exists(name, page)).map((name) => `${page}:${line} ${name}`)),
  );
}

// Files a guide has its reader write, which the repository does not hold.
const WRITTEN_BY_GUIDES: Record<string, string[]> = {
  'docs/add-a-flow.md': ['workflows/dunning.ts', 'test/production/histories/dunning.json'],
  'docs/add-a-provider.md': ['src/providers/typeform.ts', 'src/providers/fixtures/typeform.form_response.json'],
};

// Variables a page names that other programs read: Temporal's (its CLI, UI and SDK), Grafana's and
// docker-compose.yml's, and a guide's or an example's own sources.
const OTHERS_VARIABLES = new Set([
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_CODEC_ENDPOINT',
  'GF_SECURITY_ADMIN_PASSWORD',
  'NODE_ENV',
  'TYPEFORM_WEBHOOK_SECRET',
  'CLERK_WEBHOOK_SECRET',
]);
// Words in capitals that are not variables: Temporal's policy and versioning behaviour names.
const NOT_VARIABLES = new Set(['REJECT_DUPLICATE', 'AUTO_UPGRADE']);

function variablesKnown(): Set<string> {
  const known = variablesTheCodeReads();
  for (const { builtIn } of PROVIDERS) for (const name of builtIn ? [builtIn.secretEnv, builtIn.publicKeyEnv, builtIn.urlEnv] : []) if (name) known.add(name);
  // npm run bench's sizes (benchSize('ROUNDS', …) reads BENCH_ROUNDS) and its other settings.
  const bench = readdirSync(path.join(ROOT, 'test/bench'))
    .map((file) => read(`test/bench/${file}`))
    .join('\n');
  for (const match of bench.matchAll(/benchSize\('([A-Z_]+)'/g)) known.add(`BENCH_${match[1]}`);
  for (const match of bench.matchAll(/env\.(BENCH_[A-Z_]+)/g)) known.add(match[1]!);
  for (const match of read('docker-compose.yml').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)) known.add(match[1]!);
  // The tests' own: which Chromium drives the browser tests.
  known.add('CHROMIUM_PATH');
  return known;
}

/** Whether `durable-webhooks …` as written names real commands and options: subcommands as far as they go, then options. */
function commandProblems(words: string[], root: Command): string[] {
  let command = root;
  const chain = [root];
  let index = 0;
  for (; index < words.length; index++) {
    const next = command.commands.find((sub) => sub.name() === words[index] || sub.aliases().includes(words[index]!));
    if (!next) break;
    command = next;
    chain.push(next);
  }
  if (command === root && words.length > 0 && !words[0]!.startsWith('-')) return [`no command ${words[0]}`];
  const options = new Set([
    '--help',
    '-h',
    ...chain.flatMap((each) => each.options.flatMap((option) => [option.long, option.short].filter((name): name is string => Boolean(name)))),
  ]);
  return words
    .slice(index)
    .filter((word) => /^--?[a-z]/.test(word))
    .map((word) => word.split('=')[0]!)
    .filter((option) => !options.has(option))
    .map((option) => `${[root, ...chain.slice(1)].map((each) => each.name()).join(' ')}: no option ${option}`);
}

describe('what the pages name exists in the code', () => {
  it('every file path', () => {
    const paths = (code: string) =>
      [...code.matchAll(/(?:^|[\s(=:'"])((?:src|test|scripts|docs|deploy|contracts|workflows|activities|\.ci)\/[\w./-]*)/g)].map((match) =>
        match[1]!.replace(/[.,:;]+$/, ''),
      );
    expect(missing(paths, (file, page) => existsSync(path.join(ROOT, file)) || (WRITTEN_BY_GUIDES[page] ?? []).includes(file))).toEqual([]);
  });

  it('every environment variable', () => {
    const known = variablesKnown();
    const variables = (code: string) =>
      [...code.matchAll(/(?<![\w$.{-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w(])/g)].map((match) => match[1]!).filter((name) => !NOT_VARIABLES.has(name));
    // <NAME>_FILE and <NAME>_PREVIOUS are read for every secret the code reads; TEMPORAL_TLS_* by the SDK's envconfig.
    const exists = (name: string, page: string) =>
      known.has(name.replace(/_(FILE|PREVIOUS)$/, '')) ||
      OTHERS_VARIABLES.has(name) ||
      OTHERS_VARIABLES.has(name.replace(/_(FILE|PREVIOUS)$/, '')) ||
      declaredByExamples(page).has(name) ||
      (name.startsWith('TEMPORAL_TLS_') && known.has('TEMPORAL_TLS_*'));
    expect(missing(variables, exists)).toEqual([]);
  });

  it('every durable-webhooks command and option', () => {
    const root = buildProgram();
    const problems = PAGES.flatMap((page) =>
      codeOf(page).flatMap(({ text, line }) =>
        text
          .split('\n')
          .flatMap((row) => [...row.trim().matchAll(/(?:^|npx |\$ |&& )durable-webhooks((?: +[\w:.-]+|(?: +--?[a-z][\w-]*(?:=\S+)?))+)/g)])
          .map((match) => match[1]!.trim().split(/ +/))
          // Arguments after the command words are values (IDs, sources, types) until the options.
          .flatMap((words) => commandProblems(words, root).map((problem) => `${page}:${line} ${problem}`)),
      ),
    );
    expect(problems).toEqual([]);
  });

  it('every metric', () => {
    const declared = new Set(
      [...(read('src/http/metrics.ts') + read('activities/metrics.ts')).matchAll(/'((?:webhook|durable_webhooks)_[a-z_]+)'/g)].map((match) => match[1]!),
    );
    const metrics = (code: string) =>
      [...code.matchAll(/\b((?:webhook|durable_webhooks)_[a-z_]+)\b/g)]
        .map((match) => match[1]!)
        .filter((name) => !['durable_webhooks_inbox'].includes(name) && !/_development_only$/.test(name));
    expect(missing(metrics, (name) => declared.has(name.replace(/_(bucket|count|sum)$/, '')))).toEqual([]);
  });

  it('every refusal reason and problem type', () => {
    const source = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.tsx?$/.test(file))
      .map((file) => read(`src/${file}`))
      .join('\n');
    const slugs = new Set(
      [...source.matchAll(/problem(?:<[^>]*>)?\(\s*\d+,\s*'([a-z-]+)'|slug = '([a-z-]+)'|problemType\('([a-z-]+)'\)|'replay'/g)].map(
        (match) => match[1] ?? match[2] ?? match[3] ?? 'replay',
      ),
    );
    expect(slugs.size).toBeGreaterThan(20);
    const problemTypes = (code: string) => [...code.matchAll(/urn:durable-webhooks:problem:([a-z-]+)/g)].map((match) => match[1]!);
    expect(missing(problemTypes, (slug) => slugs.has(slug))).toEqual([]);
    // The console page's list of refusal reasons.
    const refused = /\*\*7\. Refused deliveries\.\*\*[^]*?\n\n/.exec(read('docs/console.md'))![0];
    const reasons = [...refused.matchAll(/`([a-z]+(?:-[a-z]+)*)`/g)].map((match) => match[1]!);
    expect(reasons.length).toBeGreaterThan(3);
    expect(reasons.filter((reason) => !slugs.has(reason))).toEqual([]);
  });
});

describe('statements a review found contradicting the code stay out', () => {
  // The pages, and the comments and help texts of the code and the chart.
  const files = [
    ...PAGES,
    ...['src', 'contracts', 'activities', 'workflows', 'scripts', 'deploy/helm/durable-webhooks'].flatMap((dir) =>
      readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(tsx?|sh|ya?ml|tpl|md)$/.test(file))
        .map((file) => `${dir}/${file}`),
    ),
  ];
  const all = () => files.map((page) => ({ page, text: read(page).replace(/\s+/g, ' ') }));
  it.each([
    [
      '.tools/bin/temporal said to come with npm install (predev and the test scripts install it)',
      /\.tools\/bin\/temporal`? (?:is installed |comes )?(?:by|after|with) `?npm install/i,
    ],
    ['a refusal reason stale-timestamp (a timestamp out of tolerance is invalid-signature)', /stale-timestamp/],
    ['the fuzz suite said to cover three providers (it covers every built-in kind)', /fuzz suite[^.]*\bthree providers/i],
    [
      'webhook_workflow_start_seconds said to time Temporal alone (under ACKNOWLEDGE=database it times the PostgreSQL insert)',
      /webhook_workflow_start_seconds`?[^.]*\b(?:Temporal's start time|time Temporal takes)|'webhook_workflow_start_seconds', help: 'Time to get Temporal/i,
    ],
    [
      'ADMIN_PORT said to move /admin, /codec and /v1 without /console (it moves /console too)',
      /(?:ADMIN_PORT|adminPort)`?[^.]{0,60}\/admin`?, `?\/codec`? and `?\/v1|\/admin`?, `?\/codec`? and `?\/v1`? (?:on|answer only on) [^.]{0,40}(?:ADMIN_PORT|adminPort)/,
    ],
    [
      'src/dev/ said to hold only what npm run dev uses (the CLI and the worker use its stand-in key and handoff)',
      /src\/dev\/`?:? (?:is )?(?:everything |what )?only (?:what )?`?npm run dev/i,
    ],
    [
      'a flash-sale release of a Shopify tenant (no Shopify flow names a tenant, so a release of it is first in, first out)',
      /(?:hold|release) shopify\b.{0,200}?flash[- ]sale/i,
    ],
    ['EVENT_FIELDS, a name nothing declares', /EVENT_FIELDS/],
    ['the intake in src/inbox/ or src/temporal/start-event.ts (it is src/intake/)', /src\/inbox\/|start-event\.ts/],
  ])('%s', (_statement, pattern) => {
    expect(
      all()
        .filter(({ text }) => pattern.test(text))
        .map(({ page }) => page),
    ).toEqual([]);
  });
});
