import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/processes';

/**
 * No Docker engine runs here, so the image is built by replaying the Dockerfile: each stage in a
 * folder of its own, holding only what its COPY lines name, with its RUN lines run in order. A file
 * the Dockerfile forgets to copy, or code that reaches outside what it copies, fails here as it would
 * fail `docker build`.
 */
interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  base: string;
  name?: string;
  instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const line of lines.map((raw) => raw.trim()).filter((raw) => raw && !raw.startsWith('#'))) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const [base = '', , name] = args.split(/\s+/);
      stages.push({ base, name, instructions: [] });
    } else {
      stages.at(-1)!.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

const stages = parseDockerfile(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const scratch = mkdtempSync(path.join(tmpdir(), 'dw-image-'));
const stageDir = (name: string) => path.join(scratch, name);

/** The environment of a container: no npm lifecycle variables from the test run, the image's ENV lines. */
function containerEnv(stage: Stage): NodeJS.ProcessEnv {
  // The machine's way to the registry (a proxy, the certificates it is trusted by) is the build host's, as it is for `docker build`.
  const network = Object.fromEntries(
    ['NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy']
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]]),
  );
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...network,
    npm_config_prefer_offline: 'true',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  for (const { keyword, args } of stage.instructions) {
    if (keyword !== 'ENV') continue;
    const [name = '', value = ''] = args.split(/[=\s]/, 2);
    env[name] = value;
  }
  return env;
}

/** Replays one stage: COPY from the build context or an earlier stage (its WORKDIR mapped to that stage's folder), then RUN. */
function replay(stage: Stage, dir: string): void {
  mkdirSync(dir, { recursive: true });
  let workdir = '/';
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') workdir = args;
    if (keyword === 'COPY') {
      const words = args.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((word) => !word.startsWith('--'));
      const destination = paths.pop()!;
      for (const source of paths) {
        const origin = from ? path.join(stageDir(from), path.relative(stageWorkdir(from), source)) : path.join(ROOT, source);
        const target = destination.endsWith('/') ? path.join(dir, destination, path.basename(source)) : path.join(dir, destination);
        cpSync(origin, target, { recursive: true });
      }
    }
    if (keyword === 'RUN') {
      const run = spawnSync('sh', ['-c', args], { cwd: dir, env: containerEnv(stage), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      if (run.status !== 0) throw new Error(`RUN ${args} failed with ${run.status}:\n${run.stdout}\n${run.stderr}`);
    }
  }
  expect(workdir).toBe('/app');
}

function stageWorkdir(name: string): string {
  const stage = stages.find((candidate) => candidate.name === name)!;
  return stage.instructions.filter((instruction) => instruction.keyword === 'WORKDIR').at(-1)!.args;
}

const build = stages.find((stage) => stage.name === 'build')!;
const runtime = stages.at(-1)!;

beforeAll(() => {
  replay(build, stageDir('build'));
  replay(runtime, stageDir('runtime'));
}, 600_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('Dockerfile, replayed without Docker', () => {
  it('has a build stage and a runtime stage that copies from it', () => {
    expect(stages).toHaveLength(2);
    expect(
      runtime.instructions.filter((instruction) => instruction.keyword === 'COPY').every((instruction) => instruction.args.startsWith('--from=build ')),
    ).toBe(true);
  });

  it('runs both stages on Node.js 24 LTS, the minor .node-version pins for CI, on Debian bookworm slim', () => {
    const [major, minor] = readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim().split('.');
    expect(major).toBe('24');
    expect(stages.map((stage) => stage.base)).toEqual([`node:${major}.${minor}-bookworm-slim`, `node:${major}.${minor}-bookworm-slim`]);
  });

  it('builds the receiver, the worker, the CLI and the prebuilt workflow bundle into dist/', () => {
    for (const file of ['dist/src/receiver.js', 'dist/src/worker.js', 'dist/src/cli/index.js', 'dist/workflow-bundle.js']) {
      expect({ file, exists: existsSync(path.join(stageDir('runtime'), file)) }).toEqual({ file, exists: true });
    }
  });

  it('ships no dev dependencies and no tests', () => {
    expect(existsSync(path.join(stageDir('runtime'), 'node_modules', 'jest'))).toBe(false);
    expect(existsSync(path.join(stageDir('runtime'), 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(path.join(stageDir('runtime'), 'test'))).toBe(false);
    expect(existsSync(path.join(stageDir('runtime'), 'dist', 'test'))).toBe(false);
  });

  const run = (args: string[], env: Record<string, string> = {}) => {
    const result = spawnSync('node', args, { cwd: stageDir('runtime'), env: { ...containerEnv(runtime), ...env }, encoding: 'utf8', timeout: 60_000 });
    return { code: result.status, output: `${result.stdout}${result.stderr}` };
  };

  it('runs the CLI from the image', () => {
    const { code, output } = run(['dist/src/cli/index.js', '--help']);
    expect(code).toBe(0);
    expect(output).toContain('Usage: durable-webhooks');
  });

  it('starts the receiver (its CMD) and refuses to run without a signing secret, in one line', () => {
    const cmd = JSON.parse(runtime.instructions.find((instruction) => instruction.keyword === 'CMD')!.args) as string[];
    expect(cmd.slice(0, 2)).toEqual(['node', 'dist/src/receiver.js']);
    const { code, output } = run(cmd.slice(1));
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(output)).toMatchObject({ level: 'error', message: expect.stringContaining('no source has a signing secret') });

    // With a secret but no database, it refuses too: every body is stored before its workflow starts.
    const withoutDatabase = run(cmd.slice(1), { GITHUB_WEBHOOK_SECRET: 'a-secret' });
    expect(withoutDatabase.code).toBe(1);
    expect(withoutDatabase.output).toContain('DATABASE_URL is required');
  });

  it('starts the worker from the prebuilt bundle, which needs its real settings', () => {
    const { code, output } = run(['dist/src/worker.js']);
    expect(code).toBe(1);
    expect(JSON.parse(output)).toMatchObject({ level: 'error', message: expect.stringContaining('EMAIL_PROVIDER must be resend or smtp') });
  });
});
