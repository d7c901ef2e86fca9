import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { passableTempDir } from './dirs';
import path from 'node:path';
import { codeBlocks, shellWords, type CodeBlock } from './markdown';
import { ROOT, runCli } from './processes';

/**
 * A guide of docs/ followed on a copy of the project: the project as a clone has it (tracked files,
 * and new ones not ignored) with the installed dependencies and tools, and each of the guide's
 * blocks written where it says: `file=` (the whole file), `append=` (added at its end), or
 * `into=… before=…` (inserted before the first line holding `before`). Returns the copy, the blocks,
 * and the paths the guide wrote, in its order.
 */
export function followGuide(page: string): { copy: string; blocks: CodeBlock[]; written: string[] } {
  const blocks = codeBlocks(readFileSync(path.join(ROOT, page), 'utf8'));
  const copy = passableTempDir('dw-guide-');
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(copy, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  symlinkSync(path.join(ROOT, '.tools'), path.join(copy, '.tools'));

  const written: string[] = [];
  for (const { attributes, text } of blocks) {
    const { file, append, into, before } = attributes;
    if (file) writeFileSync(path.join(copy, file), text);
    if (append) appendFileSync(path.join(copy, append), text);
    if (into) {
      const target = path.join(copy, into);
      const lines = readFileSync(target, 'utf8').split('\n');
      const at = lines.findIndex((line) => line.includes(before!));
      if (at < 0) throw new Error(`${page}: ${into} has no line with "${before}" to insert before.`);
      lines.splice(at, 0, text.trimEnd());
      writeFileSync(target, lines.join('\n'));
    }
    const where = file ?? append ?? into;
    if (where) written.push(where);
  }
  return { copy, blocks, written };
}

/** A command as a guide writes it, run in the copy: `npx durable-webhooks` is the copy's CLI. */
export function runInCopy(command: string, env: NodeJS.ProcessEnv, copy: string) {
  const words = shellWords(command);
  if (words[0] !== 'npx' || words[1] !== 'durable-webhooks') throw new Error(`"${command}" is not a durable-webhooks command.`);
  return runCli(words.slice(2), env, copy);
}
