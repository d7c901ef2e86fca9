import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { TEMPORAL_DATABASES } from '../../src/cluster/schemas';
import { HISTORY_SHARDS, TEMPORAL_SERVER_VERSION } from '../../src/cluster/server';
import { loadReceiverConfig } from '../../src/config';
import { DEFAULT_TEMPORAL_ADDRESS } from '../../src/temporal/connection';
import { SERVER_DYNAMIC_CONFIG } from '../../src/temporal/server-process';
import { PROVIDERS } from '../../src/providers/index';
import { variablesTheCodeReads } from '../support/environment';

/** No Docker engine runs here, so the compose file is checked against the code instead of run. */
const root = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const { services } = compose;
const packageJson = JSON.parse(read('package.json')) as { scripts: Record<string, string>; bin: Record<string, string> };
const codeReads = variablesTheCodeReads();

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, schema setup, Temporal on it, the Temporal UI, namespace setup, Mailpit, the receiver, the worker, Prometheus, Jaeger and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual([
      'grafana',
      'jaeger',
      'mailpit',
      'postgresql',
      'prometheus',
      'receiver',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'webhooks-database',
      'worker',
    ]);
    expect(services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql', NUM_HISTORY_SHARDS: HISTORY_SHARDS });
    expect(services.temporal!.depends_on).toEqual({ 'temporal-schema': { condition: 'service_completed_successfully' } });
    expect(services['temporal-schema']!.depends_on).toEqual({ postgresql: { condition: 'service_healthy' } });
  });

  it('runs the Temporal server version npm run cluster builds, from the official server and admin-tools images (not auto-setup)', () => {
    expect(services.temporal!.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-schema']!.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    expect(read('docker-compose.yml')).not.toContain('auto-setup');
    expect(read('scripts/install-temporal-server.sh')).toContain(`TEMPORAL_SERVER_VERSION=v${TEMPORAL_SERVER_VERSION}`);
  });

  it('runs Temporal with the dynamic config every server we run has (task-queue fairness)', () => {
    const file = '/etc/temporal/config/dynamicconfig/durable-webhooks.yaml';
    expect(services.temporal!.environment).toMatchObject({ DYNAMIC_CONFIG_FILE_PATH: file });
    expect(services.temporal!.volumes).toContain(`./deploy/temporal/dynamicconfig.yaml:${file}:ro`);
    const mounted = parse(read('deploy/temporal/dynamicconfig.yaml')) as Record<string, Array<{ value: unknown }>>;
    expect(Object.fromEntries(Object.entries(mounted).map(([key, [setting]]) => [key, setting!.value]))).toEqual(SERVER_DYNAMIC_CONFIG);
  });

  it("sets up both of Temporal's databases with the schemas npm run cluster uses", () => {
    const script = services['temporal-schema']!.command!.join('\n');
    for (const [database, schema] of Object.entries(TEMPORAL_DATABASES)) expect(script).toContain(`${database}:${schema}`);
  });

  it("publishes Temporal's gRPC port, the Temporal UI and Mailpit on 127.0.0.1 only; only the receiver faces the network", () => {
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) {
        if (name === 'receiver') continue;
        expect({ name, port, loopback: port.startsWith('127.0.0.1:') }).toEqual({ name, port, loopback: true });
      }
    }
  });

  it('runs the receiver and the worker from the Dockerfile with the same entry points as npm run receiver / worker', () => {
    expect(read('Dockerfile')).toContain('CMD ["node", "dist/src/receiver.js"]');
    expect(services.receiver!.build).toBe('.');
    expect(services.worker!.build).toBe('.');
    expect(packageJson.scripts.receiver).toBe(services.receiver!.command!.join(' '));
    expect(packageJson.scripts.worker).toBe(services.worker!.command!.join(' '));
    expect(services['temporal-setup']!.command).toEqual(['node', packageJson.bin['durable-webhooks'], 'setup']);
  });

  it('publishes the receiver on its default port, Temporal on 7233 and the UI on 8233', () => {
    const defaults = loadReceiverConfig({});
    expect(services.receiver!.environment!.PORT).toBe(defaults.port);
    expect(services.receiver!.ports![0]).toBe(`${defaults.port}:${defaults.port}`);
    expect(services.temporal!.ports).toEqual([`127.0.0.1:${DEFAULT_TEMPORAL_ADDRESS.split(':')[1]}:7233`]);
    expect(services['temporal-ui']!.ports).toEqual(['127.0.0.1:8233:8080']);
  });

  it('points every Temporal client at the temporal service, on one namespace and one task queue', () => {
    for (const name of ['receiver', 'worker', 'temporal-setup']) {
      expect(services[name]!.environment).toMatchObject({
        TEMPORAL_ADDRESS: 'temporal:7233',
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_TASK_QUEUE: loadReceiverConfig({}).taskQueue,
      });
    }
    expect(services['temporal-ui']!.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it("mounts ./secrets/signing, read-only, as the receiver's SIGNING_SECRETS_DIR, names no kind's variable, and keeps the files out of git and the image", () => {
    const receiver = services.receiver!;
    expect(receiver.environment).toMatchObject({ SIGNING_SECRETS_DIR: '/run/secrets/signing' });
    expect(receiver.volumes).toEqual(['./secrets/signing:/run/secrets/signing:ro']);
    expect(services.worker!.volumes ?? []).toEqual([]);
    // What the kinds declare (src/providers/<kind>.ts): no service's settings name any of it.
    const declared = PROVIDERS.flatMap((provider) =>
      provider.builtIn ? [provider.builtIn.secretEnv, provider.builtIn.publicKeyEnv, provider.builtIn.urlEnv].filter(Boolean) : [],
    );
    const settings = JSON.stringify(services);
    expect(declared.filter((name) => settings.includes(name!))).toEqual([]);
    expect(read('.gitignore').split('\n')).toContain('secrets/');
    expect(read('.dockerignore').split('\n')).toEqual(expect.arrayContaining(['secrets', '.env']));
    for (const name of ['VIEWER_TOKENS', 'ALERT_WEBHOOK_URL', 'ALERT_WEBHOOK_SECRET', 'ALERT_SLACK_WEBHOOK_URL'])
      expect(receiver.environment).toHaveProperty(name, `\${${name}:-}`);
  });

  it("serves the operators' routes on ADMIN_PORT, published on loopback only, and the webhooks alone on the public port", () => {
    const { environment, ports } = services.receiver!;
    expect(environment).toMatchObject({ PORT: 3000, ADMIN_PORT: 3002 });
    expect(ports).toEqual(['3000:3000', '127.0.0.1:3002:3002']);
    expect(services['temporal-ui']!.environment).toMatchObject({ TEMPORAL_CORS_ORIGINS: 'http://localhost:3002' });
  });

  it('uses only environment names the code reads and docs/configuration.md documents', () => {
    const names = new Set(['receiver', 'worker'].flatMap((name) => Object.keys(services[name]!.environment!)));
    for (const name of names) {
      // A secret's `_PREVIOUS` companion is read wherever the secret is (src/config/sources.ts's withPrevious).
      const base = name.replace(/_PREVIOUS$/, '');
      const readByCode = base.startsWith('TEMPORAL_') || codeReads.has(base);
      expect({ name, readByCode }).toEqual({ name, readByCode: true });
      expect(read('docs/configuration.md')).toContain(`\`${base}\``);
      if (base !== name) expect(read('docs/configuration.md')).toContain('`<any secret or key>_PREVIOUS`');
    }
  });

  it('gives the worker the database webhooks-database creates on the postgresql service, and Mailpit for email', () => {
    const url = new URL(String(services.worker!.environment!.DATABASE_URL).replace('${WEBHOOKS_DB_PASSWORD:?}', 'password'));
    expect([url.hostname, url.port]).toEqual(['postgresql', '5432']);
    expect(services['webhooks-database']!.environment).toMatchObject({ PGHOST: 'postgresql', PGUSER: services.postgresql!.environment!.POSTGRES_USER });
    expect(services.worker!.environment).toMatchObject({ EMAIL_PROVIDER: '${EMAIL_PROVIDER:-smtp}', SMTP_URL: '${SMTP_URL:-smtp://mailpit:1025}' });
  });
});

describe('observability in docker-compose.yml', () => {
  const prometheus = parse(read('observability/prometheus.yml')) as {
    scrape_configs: Array<{ job_name: string; static_configs?: Array<{ targets: string[] }>; dns_sd_configs?: Array<{ names: string[]; port: number }> }>;
  };
  const job = (name: string) => prometheus.scrape_configs.find((config) => config.job_name === name)!;
  const mounted = (service: string, file: string) => services[service]!.volumes!.some((volume) => volume.startsWith(`./${file}:`));

  it('has Prometheus scrape the receiver on RECEIVER_METRICS_ADDRESS and every worker replica on WORKER_METRICS_ADDRESS', () => {
    expect(mounted('prometheus', 'observability/prometheus.yml')).toBe(true);
    const receiverPort = String(services.receiver!.environment!.RECEIVER_METRICS_ADDRESS).split(':')[1];
    expect(receiverPort).not.toBe(String(services.receiver!.environment!.PORT));
    expect(job('receiver').static_configs![0]!.targets).toEqual([`receiver:${receiverPort}`]);
    const workerPort = Number(String(services.worker!.environment!.WORKER_METRICS_ADDRESS).split(':')[1]);
    expect(job('worker').dns_sd_configs).toEqual([{ names: ['worker'], type: 'A', port: workerPort }]);
  });

  it("sends both processes' traces to Jaeger over OTLP", () => {
    for (const name of ['receiver', 'worker']) {
      expect(services[name]!.environment).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
    }
  });

  it('provisions Grafana with Prometheus and one dashboard: deliveries by outcome, start latency, workflow backlog, activity failures, held and unrouted events', () => {
    const datasources = parse(read('observability/grafana/provisioning/datasources/prometheus.yml')) as { datasources: Array<{ uid: string; url: string }> };
    expect(datasources.datasources).toEqual([expect.objectContaining({ uid: 'prometheus', url: 'http://prometheus:9090' })]);
    const providers = parse(read('observability/grafana/provisioning/dashboards/durable-webhooks.yml')) as { providers: Array<{ options: { path: string } }> };
    expect(services.grafana!.volumes).toContain(`./observability/grafana/dashboards:${providers.providers[0]!.options.path}:ro`);
    expect(mounted('grafana', 'observability/grafana/provisioning')).toBe(true);

    const dashboard = JSON.parse(read('observability/grafana/dashboards/durable-webhooks.json')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string; datasource: { uid: string } }> }>;
    };
    const titles = dashboard.panels.map((panel) => panel.title).join(' | ');
    for (const title of [/Deliveries by outcome/, /start latency/, /backlog/, /Activity failures/, /Inbox: events committed and not started/])
      expect(titles).toMatch(title);
    const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)).join(' ');
    for (const gauge of ['webhook_start_backlog', 'webhook_start_backlog_oldest_seconds']) expect(exprs).toContain(`max(${gauge})`);
    for (const gauge of ['webhook_held_events', 'webhook_unrouted_events']) expect(exprs).toContain(`max by (source, type) (${gauge})`);
    for (const target of dashboard.panels.flatMap((panel) => panel.targets)) expect(target.datasource.uid).toBe('prometheus');
  });

  it("gives our database its own role, whose password must be set, instead of Temporal's temporal/temporal", () => {
    for (const name of ['receiver', 'worker']) {
      const url = new URL(String(services[name]!.environment!.DATABASE_URL).replace('${WEBHOOKS_DB_PASSWORD:?}', 'password'));
      expect([url.username, url.pathname]).toEqual(['webhooks', '/webhooks']);
      expect(String(services[name]!.environment!.DATABASE_URL)).toContain('${WEBHOOKS_DB_PASSWORD:?}');
      expect(services[name]!.depends_on).toMatchObject({ 'webhooks-database': { condition: 'service_completed_successfully' } });
    }
    const setup = services['webhooks-database']!;
    expect(setup.environment).toMatchObject({ WEBHOOKS_DB_PASSWORD: expect.stringMatching(/^\$\{WEBHOOKS_DB_PASSWORD:\?.+\}$/) });
    expect(setup.command![0]).toMatch(
      /CREATE ROLE webhooks LOGIN[\s\S]*ALTER ROLE webhooks PASSWORD :'password'[\s\S]*CREATE DATABASE webhooks OWNER webhooks/,
    );
    expect(services.postgresql!.environment).not.toHaveProperty('POSTGRES_DB');
  });

  it("requires Grafana's admin password instead of its default admin/admin", () => {
    expect(services.grafana!.environment).toMatchObject({ GF_SECURITY_ADMIN_PASSWORD: expect.stringMatching(/^\$\{GF_SECURITY_ADMIN_PASSWORD:\?.+\}$/) });
  });
});
