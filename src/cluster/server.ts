import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { ConfigError } from '../core/errors';
import { isLoopback, SERVER_DYNAMIC_CONFIG, splitAddress, stopChild, waitUntilServing } from '../temporal/server-process';
import { temporalServerPath } from '../core/tools';
import { ensureSchemas } from './schemas';

/** The Temporal server version scripts/install-temporal-server.sh builds, and docker-compose.yml runs. */
export const TEMPORAL_SERVER_VERSION = '1.32.2';

/** Shards are fixed when the databases are created; 8 spreads work the way a production cluster does. */
export const HISTORY_SHARDS = 8;

/** Where `npm run cluster` expects PostgreSQL when TEMPORAL_DB_URL is unset (compose's credentials). */
export const DEFAULT_TEMPORAL_DB_URL = 'postgres://temporal:temporal@127.0.0.1:5432/postgres';

export interface ClusterOptions {
  /** The frontend's `host:port`; the other services take the ports after it (see `servicePorts`). */
  address: string;
  /** A PostgreSQL server URL whose user may create databases; its path names the database to connect to first. */
  dbUrl: string;
  /** Where the server's config and log go. */
  dir: string;
  /** Where the server's own log lines go besides `<dir>/temporal.log`. @default 'log-file-only' */
  output?: 'inherit' | 'log-file-only';
  /** @default 60_000 */
  startTimeoutMs?: number;
  /**
   * mTLS on the frontend: its certificate and key, the CA whose client certificates it accepts (it
   * requires one), and the client certificate the server's own system worker presents.
   */
  tls?: ClusterTls;
  /**
   * Server processes on the same databases, forming one ring: node 0 has `address` (the clients'
   * frontend), node i takes the ports `NODE_PORT_STEP` × i above it. @default 1
   */
  nodes?: number;
  /** Called when a node that was not being stopped exits, before it is started again. */
  onNodeExit?: (node: ClusterNode, code: number | null) => void;
}

/** One server process of the cluster. */
export interface ClusterNode {
  index: number;
  /** Its frontend's `host:port`. */
  address: string;
  pid: number | undefined;
  logFile: string;
}

/** How far apart the nodes' ports are: each node's services sit within 10 ports of its frontend. */
export const NODE_PORT_STEP = 20;

export interface ClusterTls {
  certFile: string;
  keyFile: string;
  /** The CA whose client certificates the frontend accepts. */
  clientCaFile: string;
  /** A client's certificate and key, and the CA that signed the frontend's: the server's own system worker presents them. */
  client: { crt: Buffer; key: Buffer; serverCa: Buffer };
}

export interface RunningCluster {
  address: string;
  /** Node 0's log. */
  logFile: string;
  nodes: ClusterNode[];
  /** Stops every node and waits for them to exit. */
  stop(): Promise<void>;
  /**
   * Resolves with the exit code when the cluster gives up: a node exited again within
   * `MIN_NODE_UPTIME_MS` of being restarted. A node that exits later is restarted.
   */
  exited: Promise<number | null>;
}

/** A node restarted sooner than this after its last start is failing, not crashed once: the cluster stops. */
export const MIN_NODE_UPTIME_MS = 10_000;

/**
 * The pinned Temporal server with PostgreSQL persistence and SQL visibility: creates or upgrades the
 * schemas, writes each node's config, starts the nodes, and resolves once every frontend answers.
 * A node that exits on its own (killed, crashed) is started again on the same ports, as a process
 * manager would, and rejoins the ring.
 */
export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  await ensureSchemas(options.dbUrl);
  mkdirSync(options.dir, { recursive: true });
  if (options.tls) {
    writeFileSync(path.join(options.dir, 'system-worker.crt'), options.tls.client.crt);
    writeFileSync(path.join(options.dir, 'system-worker.key'), options.tls.client.key, { mode: 0o600 });
    writeFileSync(path.join(options.dir, 'server-ca.crt'), options.tls.client.serverCa);
  }
  writeFileSync(path.join(options.dir, 'dynamicconfig.yaml'), stringify(DYNAMIC_CONFIG));
  const { host, port } = splitAddress(options.address);
  const count = options.nodes ?? 1;
  const tls = options.tls && {
    clientCertPair: { crt: options.tls.client.crt, key: options.tls.client.key },
    serverRootCACertificate: options.tls.client.serverCa,
  };

  let stopping = false;
  let gaveUp: (code: number | null) => void = () => undefined;
  const exited = new Promise<number | null>((resolve) => (gaveUp = resolve));
  const running = new Map<number, { child: ChildProcess; exited: Promise<number | null>; startedAt: number }>();
  const nodes: ClusterNode[] = Array.from({ length: count }, (_, index) => ({
    index,
    address: `${host}:${port + index * NODE_PORT_STEP}`,
    pid: undefined,
    logFile: path.join(options.dir, index === 0 ? 'temporal.log' : `temporal-${index}.log`),
  }));

  const startNode = (node: ClusterNode, restarted = false) => {
    const configFile = path.join(options.dir, node.index === 0 ? 'config.yaml' : `config-${node.index}.yaml`);
    writeFileSync(configFile, stringify(serverConfig({ ...options, address: node.address }, options.address)));
    const log = createWriteStream(node.logFile, { flags: 'a' });
    const child = spawn(temporalServerPath(), ['--config-file', configFile, '--allow-no-auth', 'start'], {
      cwd: options.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.pipe(log, { end: false });
      if (options.output === 'inherit') stream.pipe(process.stderr, { end: false });
    }
    const childExited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const startedAt = Date.now();
    running.set(node.index, { child, exited: childExited, startedAt });
    node.pid = child.pid;
    void childExited.then((code) => {
      if (stopping) return;
      options.onNodeExit?.(node, code);
      // A node that dies again right after being restarted is failing, not crashed once.
      if (restarted && Date.now() - startedAt < MIN_NODE_UPTIME_MS) gaveUp(code);
      else startNode(node, true);
    });
    return childExited;
  };
  const stop = async () => {
    stopping = true;
    await Promise.all([...running.values()].map(({ child, exited: childExited }) => stopChild(child, childExited)));
    gaveUp(null);
  };

  try {
    // Node 0 first: it is the clients' frontend, and the others join its ring.
    for (const node of nodes) {
      const nodeExited = startNode(node);
      await waitUntilServing(`Temporal node ${node.index} (log: ${node.logFile})`, node.address, nodeExited, options.startTimeoutMs ?? 60_000, tls);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { address: options.address, logFile: nodes[0]!.logFile, nodes, stop, exited };
}

/**
 * The frontend keeps the requested port; history, matching and the internal worker service take the
 * next ports the way Temporal's own configs space them (7233 → 7234, 7235, 7239), and membership
 * (ringpop) ports sit 300 below.
 */
export function servicePorts(frontendPort: number) {
  // Temporal's SQL schema stores membership ports as smallint.
  if (frontendPort - 300 > MAX_MEMBERSHIP_PORT || frontendPort < 1324) {
    throw new ConfigError(
      `npm run cluster needs a TEMPORAL_ADDRESS port from 1324 to ${MAX_MEMBERSHIP_PORT + 294}, not ${frontendPort}: its membership ports (300 below) must fit Temporal's schema.`,
    );
  }
  const grpc = { frontend: frontendPort, history: frontendPort + 1, matching: frontendPort + 2, worker: frontendPort + 6 };
  return {
    grpc,
    membership: Object.fromEntries(Object.entries(grpc).map(([name, port]) => [name, port - 300])) as typeof grpc,
    http: frontendPort + 10,
  };
}

/** The largest port Temporal's SQL schema can store for cluster membership (a smallint). */
export const MAX_MEMBERSHIP_PORT = 32767;

/** One node's config: its own ports, the cluster's shared databases, and the clients' frontend (`clusterAddress`) as the cluster's RPC address. */
function serverConfig({ address, dbUrl, dir, tls }: ClusterOptions, clusterAddress: string) {
  const { host, port } = splitAddress(address);
  const ports = servicePorts(port);
  const url = new URL(dbUrl);
  const sql = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${url.hostname}:${url.port || 5432}`,
      connectProtocol: 'tcp',
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const bind = isLoopback(address) ? { bindOnLocalHost: true } : { bindOnIP: host };
  const broadcastHost = isLoopback(address) ? '127.0.0.1' : host;
  const service = (name: keyof typeof ports.grpc) => ({
    rpc: { grpcPort: ports.grpc[name], membershipPort: ports.membership[name], ...bind, ...(name === 'frontend' && { httpPort: ports.http }) },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: HISTORY_SHARDS,
      datastores: { 'postgres-default': sql('temporal', 20), 'postgres-visibility': sql('temporal_visibility', 10) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: broadcastHost },
      ...(tls && {
        tls: {
          // The server's own clients of its frontend (itself, and the system worker) check its certificate for the address's host.
          frontend: {
            server: { certFile: tls.certFile, keyFile: tls.keyFile, clientCaFiles: [tls.clientCaFile], requireClientAuth: true },
            client: { serverName: broadcastHost, rootCaFiles: [path.join(dir, 'server-ca.crt')] },
          },
          systemWorker: {
            certFile: path.join(dir, 'system-worker.crt'),
            keyFile: path.join(dir, 'system-worker.key'),
            client: { serverName: broadcastHost, rootCaFiles: [path.join(dir, 'server-ca.crt')] },
          },
        },
      }),
    },
    services: { frontend: service('frontend'), history: service('history'), matching: service('matching'), worker: service('worker') },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `${broadcastHost}:${splitAddress(clusterAddress).port}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: 'dynamicconfig.yaml', pollInterval: '10s' },
  };
}

/**
 * Keeps production defaults (workflow IDs up to 1,000 bytes, as Temporal Cloud), turns task-queue
 * fairness on as every server we run does, and shortens how long a new namespace or search
 * attribute takes to become visible, so setup finishes in seconds.
 */
const DYNAMIC_CONFIG = {
  ...Object.fromEntries(Object.entries(SERVER_DYNAMIC_CONFIG).map(([key, value]) => [key, [{ value, constraints: {} }]])),
  'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true, constraints: {} }],
};
