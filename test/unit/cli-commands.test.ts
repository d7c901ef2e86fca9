import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program';

/** Every `durable-webhooks` command, as docs/operating.md says: each one that does something takes `--json`. */
const leaves = (command: Command, path: string[] = []): Array<{ path: string; command: Command }> =>
  command.commands.length === 0 ? [{ path: path.join(' '), command }] : command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));

it('gives every command --json', () => {
  const commands = leaves(buildProgram());
  expect(commands.length).toBeGreaterThan(20);
  const without = commands.filter(({ command }) => !command.options.some((option) => option.long === '--json')).map(({ path }) => path);
  expect(without).toEqual([]);
});
