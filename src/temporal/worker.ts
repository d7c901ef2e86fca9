import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetryWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { Context } from '@temporalio/activity';
import { NativeConnection, Worker, type DataConverter, type InjectedSinks, type WorkflowBundleOption } from '@temporalio/worker';
import type { Queryable } from '../db/database';
import { stuckEvents } from './stuck-events';
import type { WorkerDeployment } from '../config/worker';
import type { Tracing } from '../core/tracing';
import type { Activities } from '../../contracts';
import { PROJECT_ROOT } from '../core/paths';
import { ConfigError, messageWithCauses } from '../core/errors';
import type { TemporalSettings } from './connection';

/** The workflow bundle's entry, resolved the same way from `src/` (tsx, Jest) and from `dist/`. */
export const WORKFLOWS_PATH = require.resolve('../../workflows');

/**
 * The workflow interceptors of a worker that traces: OpenTelemetry's, which continue the trace of
 * the workflow's start into the workflow and its activities. Their spans leave through the
 * `exporter` sink (`workflowSinks`). The bundler takes a module path, and this is the one the package
 * documents for it. A worker that does not trace loads a bundle without them: they build their
 * spans whether or not anything exports them, and OpenTelemetry's modules, set up again in every
 * workflow's context, took about 30% of the workflow thread in `npm run bench`'s hot key.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')];

/** The sinks a worker of this bundle registers: the workflow spans' exporter, or a no-op without tracing. */
export function workflowSinks(tracing?: Tracing): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  return { exporter: tracing ? makeWorkflowExporter(tracing.spanProcessor, tracing.resource) : { export: { fn: () => undefined } } };
}

/** Where `npm run build` writes the prebuilt workflow bundle that workers load when they do not trace. */
export const WORKFLOW_BUNDLE_PATH = path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');
/** The same workflows with the tracing interceptors, which a worker with OTEL_* set loads. */
export const TRACED_WORKFLOW_BUNDLE_PATH = path.join(PROJECT_ROOT, 'dist', 'workflow-bundle-traced.js');

/** The prebuilt bundles and the interceptors each carries: what `npm run build` writes. */
export const PREBUILT_BUNDLES = [
  { file: WORKFLOW_BUNDLE_PATH, interceptorModules: [] },
  { file: TRACED_WORKFLOW_BUNDLE_PATH, interceptorModules: WORKFLOW_INTERCEPTOR_MODULES },
] as const;

/** The prebuilt bundle a worker loads: with the tracing interceptors when it traces. */
export const prebuiltBundlePath = (traced: boolean) => (traced ? TRACED_WORKFLOW_BUNDLE_PATH : WORKFLOW_BUNDLE_PATH);

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  /** The encryption codec, when PAYLOAD_ENCRYPTION_KEYS is set (`TemporalSettings.dataConverter`). */
  dataConverter?: DataConverter;
  /** With OTEL_* set: activities and workflows join the trace of the event's delivery. */
  tracing?: Tracing;
  /** The body store, where an activity failing attempt after attempt marks its event stuck (./stuck-events.ts). */
  bodyStore?: Queryable;
  taskQueue: string;
  /** With one, the worker is this version of the deployment and takes only tasks routed to it (docs/deploys.md). */
  deployment?: WorkerDeployment;
  activities: Activities;
  /**
   * The workflow code: a bundle (prebuilt by `npm run build`, or built in memory by tests), or
   * `'bundle-now'` to bundle `workflows/` at start, which only `npm run dev` does, when the prebuilt
   * one is older than its sources (`currentPrebuiltBundle`; seconds, and about 1 GB of memory for webpack).
   */
  workflows: WorkflowBundleOption | 'bundle-now';
}

export function createWorker({
  connection,
  namespace,
  dataConverter,
  tracing,
  bodyStore,
  taskQueue,
  deployment,
  activities,
  workflows,
}: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection,
    namespace,
    dataConverter,
    taskQueue,
    // Every flow's behaviour unless it declares PINNED (`versioning` in defineFlow); only a versioned worker reports one.
    ...(deployment && {
      workerDeploymentOptions: {
        version: { deploymentName: deployment.name, buildId: deployment.buildId },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'AUTO_UPGRADE',
      },
    }),
    ...(workflows === 'bundle-now' ? { workflowsPath: WORKFLOWS_PATH } : { workflowBundle: workflows }),
    activities,
    sinks: workflowSinks(tracing),
    interceptors: {
      ...(workflows === 'bundle-now' && tracing && { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
      activity: [
        ...(tracing
          ? [
              (context: Context) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(context),
                outbound: new OpenTelemetryActivityOutboundInterceptor(context),
              }),
            ]
          : []),
        ...(bodyStore ? [stuckEvents(bodyStore)] : []),
      ],
    },
  });
}

/** The bundle `npm run build` wrote; a clear error when it is missing. */
export function prebuiltWorkflowBundle(file: string = WORKFLOW_BUNDLE_PATH): WorkflowBundleOption {
  if (!existsSync(file)) throw new ConfigError(`The workflow bundle ${file} is missing; run npm run build.`);
  return { codePath: file };
}

/** What `npm run build` makes the workflow bundle from: the workflows, the contracts they import, the compiler's settings and the locked packages. */
const BUNDLE_INPUTS = { folders: ['workflows', 'contracts'], files: ['package-lock.json', 'tsconfig.json', 'tsconfig.build.json'] };

/**
 * The bundle `npm run build` wrote (with the tracing interceptors when `traced`), when it is newer
 * than every file it is made from; else undefined, and `npm run dev` bundles `workflows/` at start
 * (about 3 CPU-seconds of webpack), so a changed workflow is what runs.
 */
export function currentPrebuiltBundle(root: string = PROJECT_ROOT, traced = false): WorkflowBundleOption | undefined {
  const file = path.join(root, path.relative(PROJECT_ROOT, prebuiltBundlePath(traced)));
  if (!existsSync(file)) return undefined;
  const built = statSync(file).mtimeMs;
  const inputs = [
    ...BUNDLE_INPUTS.folders.flatMap((folder) =>
      readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => path.join(entry.parentPath, entry.name)),
    ),
    ...BUNDLE_INPUTS.files.map((name) => path.join(root, name)).filter((input) => existsSync(input)),
  ];
  return inputs.every((input) => statSync(input).mtimeMs < built) ? prebuiltWorkflowBundle(file) : undefined;
}

export interface RunningWorker {
  /** Resolves when the worker has stopped (after SIGINT/SIGTERM, which the SDK turns into a graceful shutdown, or `shutdown()`) and its connection is closed. */
  stopped: Promise<void>;
  /** Finishes the tasks it holds, stops polling, closes its connection. */
  shutdown(): Promise<void>;
}

/**
 * The one way every process runs a worker (`npm run worker`, `npm run dev`, the tests): connect,
 * create, run; the connection is closed in `finally`, however the run ends.
 */
export async function startWorker(options: {
  settings: TemporalSettings;
  taskQueue: string;
  deployment?: WorkerDeployment;
  activities: Activities;
  workflows: WorkerOptions['workflows'];
  tracing?: Tracing;
  bodyStore?: Queryable;
}): Promise<RunningWorker> {
  const connection = await connectWorkerConnection(options.settings);
  let worker: Worker;
  try {
    worker = await createWorker({
      connection,
      namespace: options.settings.namespace,
      dataConverter: options.settings.dataConverter,
      tracing: options.tracing,
      bodyStore: options.bodyStore,
      taskQueue: options.taskQueue,
      deployment: options.deployment,
      activities: options.activities,
      workflows: options.workflows,
    });
  } catch (error) {
    await connection.close();
    throw error;
  }
  const stopped = (async () => {
    try {
      await worker.run();
    } finally {
      await connection.close();
    }
  })();
  return {
    stopped,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await stopped;
    },
  };
}

/**
 * The worker's connection. Refused, it says where it tried and how: with a client certificate, a
 * closed connection is most often the server refusing that certificate, which the TLS error alone
 * does not always say.
 */
export async function connectWorkerConnection(settings: TemporalSettings): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(settings.connectionOptions as Parameters<typeof NativeConnection.connect>[0]);
  } catch (error) {
    const tls = settings.connectionOptions.tls;
    const how = typeof tls === 'object' && tls?.clientCertPair ? ' over mTLS (is the client certificate one the server trusts?)' : tls ? ' over TLS' : '';
    throw new Error(`cannot connect to Temporal at ${settings.connectionOptions.address}${how}: ${messageWithCauses(error)}`, { cause: error });
  }
}
