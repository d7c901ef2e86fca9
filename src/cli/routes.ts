import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { routeReplayProgressQuery, routeReplayWorkflowId, type RouteReplayInput, type RouteReplayProgress } from '../../contracts';
import { loadReceiverConfig } from '../config';
import type { SourceConfig } from '../providers/source';
import { pointInTime } from '../core/duration';
import { OperationRejectedError } from '../core/errors';
import { flowNamed, replayRouteFlow, Router } from '../flows';
import { previewRoutes, type RoutePreview } from '../intake/route-preview';
import { replayPlan, type ReplayPlan } from '../intake/route-replay';
import { lazyClient, temporalSettings } from '../temporal/connection';
import { withDatabase } from './database';
import { operator, rateOption } from './options';
import { jsonOption, print } from './output';

/** `durable-webhooks routes test|replay`: a route change tried on the stored events, and a flow run over the past. */
export function routesCommand(): Command {
  const routes = new Command('routes').description("Try a change of the sources' routes on the events already stored, or run a flow over past events.");

  routes
    .command('test')
    .description(
      "What a candidate configuration's routes would do with the stored events, against today's: per source, the events each flow (or ignore, or filtered) gets under each, and examples of events that would change flow. Starts nothing.",
    )
    .requiredOption('--config <file-or-yaml>', 'the candidate WEBHOOKS_CONFIG: a file, or its YAML or JSON text')
    .option('--since <when>', 'events received since a duration ago (30m, 2h, 7d) or an ISO time', '7d')
    .option('--until <when>', 'events received before a duration ago or an ISO time')
    .option('--source <source>', 'only this source')
    .option('--type <pattern>', 'only this event type, or a prefix ending in * (checkout.*)')
    .addOption(jsonOption())
    .action(async (options: { config: string; since: string; until?: string; source?: string; type?: string; json?: boolean }) => {
      const today = loadReceiverConfig(process.env, { development: true });
      const candidate = withConfigFile(options.config, (file) => loadReceiverConfig({ ...process.env, WEBHOOKS_CONFIG: file }, { development: true }));
      const routers = (sources: readonly SourceConfig[]) => new Map(sources.map((source) => [source.name, new Router(source.kind, source.routes)]));
      const window = readWindow(options);
      await withDatabase('routes test', async (db) => {
        const preview = await previewRoutes(db, { today: routers(today.sources), candidate: routers(candidate.sources) }, window);
        print(options.json, preview, () => describePreview(preview, window.since));
      });
    });

  routes
    .command('replay')
    .description(
      "Run a flow over the stored events today's routes send to it and it has not run for (a subscriber added today catches up on the past), as a durable job: each event once, whatever stops it or runs it again.",
    )
    .requiredOption('--flow <flow>', 'the flow to run')
    .requiredOption('--since <when>', 'events received since a duration ago (30d) or an ISO time')
    .option('--until <when>', 'events received before a duration ago or an ISO time')
    .option('--source <source>', 'only this source')
    .option('--type <pattern>', 'only this event type, or a prefix ending in * (checkout.*)')
    .option('--rate <n/s>', 'at most this many runs started a second (20/s, 600/m)', rateOption('--rate'))
    .option('--dry-run', 'only count what it would run, and show five')
    .addOption(jsonOption())
    .action(
      async (options: { flow: string; since: string; until?: string; source?: string; type?: string; rate?: number; dryRun?: boolean; json?: boolean }) => {
        const config = loadReceiverConfig(process.env, { development: true });
        const flow = flowNamed(options.flow);
        if (!flow || flow.internal) throw new OperationRejectedError(`"${options.flow}" is no event flow; \`durable-webhooks flows\` lists them.`);
        const { since, until, ...rest } = readWindow(options);
        const input: Omit<RouteReplayInput, 'rate' | 'by'> = {
          flow: flow.name,
          window: { since: since.toISOString(), until: until.toISOString(), ...rest },
          sources: config.sources.map((source) => ({ name: source.name, kind: source.kind, ...(source.routes && { routes: source.routes }) })),
        };
        if (options.dryRun) {
          await withDatabase('routes replay', async (db) => {
            const plan = await replayPlan(db, input);
            print(options.json, plan, () => describePlan(flow.name, plan));
          });
          return;
        }
        const client = lazyClient(temporalSettings());
        const handle = await client.workflow.start(replayRouteFlow.workflow, {
          workflowId: routeReplayWorkflowId(flow.name, randomUUID()),
          taskQueue: config.taskQueue,
          args: [{ ...input, ...(options.rate !== undefined && { rate: options.rate }), by: operator() }],
          staticSummary: `routes replay of ${flow.name} over events received since ${input.window.since}, by ${operator()}`.slice(0, 200),
        });
        if (!options.json) console.error(`Started ${handle.workflowId}. Stop it with: temporal workflow cancel --workflow-id '${handle.workflowId}'`);
        if (!options.json && process.stderr.isTTY) {
          const timer = setInterval(() => {
            handle
              .query(routeReplayProgressQuery)
              .then((progress) => process.stderr.write(`\r${progress.read} read, ${progress.started} started, ${progress.failed} failed`))
              .catch(() => undefined);
          }, 1000);
          await handle.result().finally(() => clearInterval(timer));
          process.stderr.write('\n');
        }
        const progress = await handle.result();
        print(options.json, { jobId: handle.workflowId, ...progress }, () => describeReplay(flow.name, progress));
        if (progress.failed > 0 || progress.state !== 'completed') process.exitCode = 1;
      },
    );
  return routes;
}

/** The window the options give: since, until (now without one), source and type. */
function readWindow(options: { since: string; until?: string; source?: string; type?: string }) {
  const now = new Date();
  return {
    since: pointInTime(options.since, 'since', now),
    until: options.until ? pointInTime(options.until, 'until', now) : now,
    ...(options.source !== undefined && { source: options.source }),
    ...(options.type !== undefined && { type: options.type }),
  };
}

/** Runs `read` on the candidate configuration's file: `value` itself when it names one, else its text in a file of its own, removed after. */
function withConfigFile<T>(value: string, read: (file: string) => T): T {
  if (existsSync(value)) return read(value);
  const dir = mkdtempSync(path.join(tmpdir(), 'dw-routes-config-'));
  try {
    const file = path.join(dir, 'webhooks.yaml');
    writeFileSync(file, value);
    return read(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function describePreview(preview: RoutePreview, since: Date): string {
  const width = Math.max(6, ...preview.routes.map((row) => row.source.length));
  const to = Math.max(2, ...preview.routes.map((row) => row.to.length));
  return [
    `Read ${preview.events} stored event(s) received since ${since.toISOString()}${preview.purged ? `; ${preview.purged} more whose bodies are purged were not read` : ''}.`,
    `${'source'.padEnd(width)}  ${'to'.padEnd(to)}  ${'today'.padStart(7)}  ${'candidate'.padStart(9)}`,
    ...preview.routes.map((row) => {
      const change = row.candidate - row.today;
      return `${row.source.padEnd(width)}  ${row.to.padEnd(to)}  ${String(row.today).padStart(7)}  ${String(row.candidate).padStart(9)}${change ? `  (${change > 0 ? '+' : ''}${change})` : ''}`;
    }),
    preview.changed === 0
      ? 'No event would go elsewhere.'
      : `${preview.changed} event(s) would go elsewhere; for example:\n${preview.examples
          .map((each) => `  ${each.eventId}  ${each.source}  ${each.type}: ${each.today.join(', ')} → ${each.candidate.join(', ')}`)
          .join('\n')}`,
    'Nothing was started.',
  ].join('\n');
}

function describePlan(flow: string, plan: ReplayPlan): string {
  const rest = plan.routed - plan.ran;
  return [
    `Read ${plan.read} stored event(s): today's routes send ${plan.routed} to ${flow}, which ran for ${plan.ran} when they arrived; ${plan.purged} bodies are purged and would be skipped.`,
    rest === 0
      ? 'Nothing to start.'
      : `It would start ${flow} for the other ${rest}, less any an earlier replay started; for example:\n${plan.examples
          .map((each) => `  ${each.eventId}  ${each.source}  ${each.type}  received ${each.receivedAt}`)
          .join('\n')}`,
  ].join('\n');
}

function describeReplay(flow: string, progress: RouteReplayProgress): string {
  const skipped = Object.entries(progress.skipped).map(([reason, count]) => `${count} skipped: ${reason}`);
  return [
    `${flow}: ${progress.state} · ${progress.read} read · ${progress.started} started${skipped.length ? ` · ${skipped.join(' · ')}` : ''} · ${progress.failed} failed`,
    ...progress.failures.map((failure) => `failed  ${failure.eventId}: ${failure.error}`),
  ].join('\n');
}
