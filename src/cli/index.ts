#!/usr/bin/env node
import '../core/compile-cache';
import { loadCommonConfig } from '../config';
import { takeHandoff } from '../dev/handoff';
import { messageWithCauses } from '../core/errors';
import { createLogger } from '../core/logger';
import { buildProgram } from './program';

const program = buildProgram();
// While `npm run dev` runs, what this shell leaves unset comes from it (src/dev/handoff.ts).
program.hook('preAction', () => void Object.assign(process.env, takeHandoff(loadCommonConfig().dataDir, process.env)));

program.parseAsync().catch((error: Error) => {
  // The reason, on stderr as every process logs: a JSON line, or a readable one on a terminal.
  createLogger('cli', { to: 'stderr', pretty: process.stderr.isTTY }).error(messageWithCauses(error));
  process.exit(1);
});
