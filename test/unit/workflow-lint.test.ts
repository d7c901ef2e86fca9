import { readdirSync, readFileSync } from 'node:fs';
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
    ['export const at = Date.now();', 'no-restricted-properties'],
    ['export const roll = Math.random();', 'no-restricted-properties'],
    ['export const env = process.env.SECRET;', 'no-restricted-globals'],
    ["import { SECRETS } from '../test/support/signing';", 'no-restricted-imports'],
  ])('rejects %s', async (code, rule) => {
    expect(await lintWorkflow(code)).toContain(rule);
  });

  it('accepts the SDK, type-only imports of activities, and our types', async () => {
    const code = [
      "import { proxyActivities } from '@temporalio/workflow';",
      "import type { Activities } from '../activities';",
      "import type { WebhookEvent } from '../src/providers/types';",
      "const { recordArrival } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });",
      'export async function example(event: WebhookEvent): Promise<void> {',
      '  await recordArrival({ source: event.source, eventId: event.id, type: event.type });',
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

describe('lint rules for shipped code (src/, activities/)', () => {
  it.each([
    ['src', "import { startStack } from '../test/support/stack';"],
    ['src/dev', "import { startStack } from '../../test/support/stack';"],
    ['activities', "import { SECRETS } from '../test/support/signing';"],
  ])('rejects an import of test/ from %s', async (folder, code) => {
    expect(await lintIn(folder, `${code}\nexport const used = [startStack, SECRETS];`)).toContain('no-restricted-imports');
  });

  it('accepts imports within src/', async () => {
    expect(await lintIn('src', "import { startStripeStandIn } from './dev/stripe-stand-in';\nexport const used = startStripeStandIn;")).toEqual([]);
  });
});
