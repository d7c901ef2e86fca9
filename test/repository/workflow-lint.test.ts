import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import config from '../../eslint.config.cjs';

const root = path.resolve(__dirname, '../..');
// ESLint loads config files with import(), which Jest's module system lacks; hand it the same config.
const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: config });
const lintIn = async (folder: string, code: string, file = 'example.ts') => {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, folder, file) });
  return result!.messages.map((message) => message.ruleId);
};
const lintWorkflow = (code: string, file?: string) => lintIn('workflows', code, file);

describe('lint rules for workflows/', () => {
  it.each([
    ["import { readFileSync } from 'fs';", 'no-restricted-imports'],
    ["import { request } from 'node:http';", 'no-restricted-imports'],
    ["import Stripe from 'stripe';", 'no-restricted-imports'],
    ["import { createActivities } from '../activities';", 'no-restricted-imports'],
    ["import type { Order } from '../activities/orders';", 'no-restricted-imports'],
    ["import type { WebhookEvent } from '../src/providers/types';", 'no-restricted-imports'],
    ["import { Client } from '@temporalio/client';", 'no-restricted-imports'],
    ['export const at = Date.now();', 'no-restricted-properties'],
    ['export const roll = Math.random();', 'no-restricted-properties'],
    ['export const env = process.env.SECRET;', 'no-restricted-globals'],
    ["import { SECRETS } from '../test/support/signing';", 'no-restricted-imports'],
  ])('rejects %s', async (code, rule) => {
    expect(await lintWorkflow(code)).toContain(rule);
  });

  it('accepts the SDK, the contracts and other workflow files', async () => {
    const code = [
      "import { proxyActivities } from '@temporalio/workflow';",
      "import type { Activities, WebhookEvent } from '../contracts';",
      "import { formatAmount } from './format';",
      "const { claimEvent } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });",
      'export async function example(event: WebhookEvent): Promise<string> {',
      "  await claimEvent({ source: event.source, eventId: event.id, type: event.type, workflowId: event.id, firstExecutionRunId: 'run' });",
      "  return formatAmount(100, 'eur');",
      '}',
    ].join('\n');
    expect(await lintWorkflow(code)).toEqual([]);
  });

  it('keeps the real workflows/ clean', async () => {
    const files = readdirSync(path.join(root, 'workflows')).filter((file) => file.endsWith('.ts'));
    expect(files).toContain('record-event.ts');
    for (const file of files) {
      expect(await lintWorkflow(readFileSync(path.join(root, 'workflows', file), 'utf8'), file)).toEqual([]);
    }
  });
});

describe('lint rules for contracts/', () => {
  it.each([
    "import { createHash } from 'node:crypto';",
    "import { Client } from '@temporalio/client';",
    "import type { Database } from '../src/db/database';",
    "import type { Activities } from '../activities';",
    "import { chargeOrder } from '../workflows/charge-order';",
  ])('rejects %s', async (code) => {
    expect(await lintIn('contracts', `${code}\nexport type Used = unknown;`)).toContain('no-restricted-imports');
  });

  it('accepts the workflow SDK, @temporalio/common and its own files', async () => {
    const code = [
      "import { defineSignal } from '@temporalio/workflow';",
      "import type { Duration } from '@temporalio/common';",
      "import type { StepKey } from './events';",
      'export const pauseSignal = defineSignal<[StepKey, Duration]>("pause");',
    ].join('\n');
    expect(await lintIn('contracts', code)).toEqual([]);
  });
});

describe('lint rules for shipped code (src/, activities/)', () => {
  it.each([
    ['src', "import { startStack } from '../test/support/stack';"],
    ['src/dev', "import { startStack } from '../../test/support/stack';"],
    ['activities', "import { SECRETS } from '../test/support/signing';"],
  ])('rejects an import of test/ from %s', async (folder, code) => {
    expect(await lintIn(folder, `${code}\nexport const used = [startStack, SECRETS];`)).toContain('no-restricted-imports');
  });

  it.each([
    ['src/temporal', "import type { EventProgress } from '../../workflows/steps';"],
    ['activities', "import { chargeOrder } from '../workflows';"],
    ['src/http', "import type { ActivityDeps } from '../../activities';"],
  ])('rejects from %s: %s', async (folder, code) => {
    expect(await lintIn(folder, `${code}\nexport type Used = unknown;`)).toContain('no-restricted-imports');
  });

  it('lets src/services.ts, and only it, wire activities/', async () => {
    expect(await lintIn('src', "import { createActivities } from '../activities';\nexport const used = createActivities;", 'services.ts')).toEqual([]);
  });

  it('accepts imports within src/ and of the contracts', async () => {
    expect(await lintIn('src', "import { startStripeStandIn } from './dev/stripe-stand-in';\nexport const used = startStripeStandIn;")).toEqual([]);
    expect(
      await lintIn(
        'activities',
        "import { FailureType } from '../contracts';\nimport { callOnce } from '../src/db/ledger';\nexport const used = [FailureType, callOnce];",
      ),
    ).toEqual([]);
  });
});

describe('the layers inside src/ (docs/architecture.md#layers-inside-src)', () => {
  it.each([
    ['src/providers', "import { loadSources } from '../config/sources';"],
    ['src/db', "import type { EventStarter } from '../intake/port';"],
    ['src/core', "import { createLogger } from '../db/database';"],
    ['src/temporal', "import { AlertChecker } from '../outbound/alerts';"],
    ['src/intake', "import { createWebhookRouter } from '../http/webhooks';"],
    ['src/http', "import { program } from '../cli/program';"],
  ])('rejects from %s an import up the layers or across its own: %s', async (folder, code) => {
    expect(await lintIn(folder, `${code}\nexport type Used = unknown;`)).toContain('import-x/no-restricted-paths');
  });

  it('accepts imports down the layers', async () => {
    const code =
      "import { isUnavailable } from '../temporal/availability';\nimport { markStarted } from '../db/inbox';\nimport { ConfigError } from '../core/errors';\nexport const used = [isUnavailable, markStarted, ConfigError];";
    expect(await lintIn('src/intake', code)).toEqual([]);
  });

  it('keeps the real src/ within its layers', async () => {
    const files = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file));
    expect(files.length).toBeGreaterThan(150);
    const broken: string[] = [];
    for (const file of files) {
      const [result] = await eslint.lintText(readFileSync(path.join(root, 'src', file), 'utf8'), { filePath: path.join(root, 'src', file) });
      broken.push(
        ...result!.messages.filter((message) => message.ruleId === 'import-x/no-restricted-paths').map((message) => `src/${file}: ${message.message}`),
      );
    }
    expect(broken).toEqual([]);
  });
});

describe('no import cycle inside src/ (.dependency-cruiser.cjs)', () => {
  const cruise = (dir: string) =>
    spawnSync(path.join(root, 'node_modules/.bin/depcruise'), ['src', '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'err'], {
      cwd: dir,
      encoding: 'utf8',
    });

  it('rejects a cycle of type-only imports, which ESLint does not see', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cycle-'));
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": true } }');
    writeFileSync(path.join(dir, 'src/operations.ts'), "import type { View } from './view';\nexport const show = (view: View) => view;\n");
    writeFileSync(path.join(dir, 'src/view.ts'), "import type { show } from './operations';\nexport type View = { shown: typeof show };\n");
    const result = cruise(dir);
    expect(result.status).not.toBe(0);
    expect(result.stdout).toMatch(/no-cycle: src\/(operations|view)\.ts/);
  });

  it('finds none in the real src/', () => {
    const result = cruise(root);
    expect({ status: result.status, output: result.stdout + result.stderr }).toMatchObject({ status: 0 });
  });
});

describe('sizes', () => {
  it('refuses a source file over 300 lines, but for the migrations', async () => {
    const long = Array.from({ length: 301 }, (_, index) => `export const line${index} = ${index};`).join('\n');
    expect(await lintIn('src/db', long, 'long.ts')).toContain('max-lines');
    expect(await lintIn('src/db', long, 'migrations.ts')).not.toContain('max-lines');
  });

  it('refuses a function over 80 lines in src/http, where routers are route groups of small handlers', async () => {
    const body = Array.from({ length: 81 }, (_, index) => `  router.get('/r${index}', () => undefined);`).join('\n');
    const code = `export function createRouter(router: { get: (path: string, handler: () => void) => void }) {\n${body}\n}`;
    expect(await lintIn('src/http', code, 'routes.ts')).toContain('max-lines-per-function');
    expect(await lintIn('src/db', code, 'routes.ts')).not.toContain('max-lines-per-function');
  });
});
