import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROVIDERS } from '../../src/providers/index';
import { variablesTheCodeReads } from '../support/environment';
import { GO_TOOL_BUILD_MS, goTool } from '../support/go-tools';
import { ROOT } from '../support/processes';

/**
 * deploy/helm/durable-webhooks, with the pinned Helm (scripts/install-helm.sh) and the strict
 * validator (deploy/helm/validate, scripts/install-helm.sh builds it): no cluster runs here, so the
 * chart is linted, rendered for each values file, and every rendered object is decoded into its
 * Kubernetes API Go type, where an unknown or misspelt field fails.
 */
const CHART = path.join(ROOT, 'deploy/helm/durable-webhooks');
let HELM: string;
let VALIDATE: string;
const VALUES = ['minimal', 'keda-servicemonitor', 'temporal-cloud'] as const;
const valuesFile = (name: string) => path.join(ROOT, 'deploy/helm/values', `${name}.yaml`);

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}
interface Container {
  name: string;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  envFrom?: Array<{ secretRef?: { name: string } }>;
  securityContext?: Record<string, unknown>;
}
interface PodSpec {
  securityContext?: Record<string, unknown>;
  containers: Container[];
}

beforeAll(async () => {
  HELM = await goTool('helm');
  VALIDATE = await goTool('k8s-validate');
}, GO_TOOL_BUILD_MS);

function template(values: string, ...extra: string[]): string {
  return execFileSync(HELM, ['template', 'webhooks', CHART, '--namespace', 'webhooks', '-f', valuesFile(values), ...extra], { encoding: 'utf8' });
}
const objectsOf = (rendered: string) =>
  parseAllDocuments(rendered)
    .map((document) => document.toJSON() as K8sObject)
    .filter(Boolean);
const podOf = (object: K8sObject): PodSpec | undefined => (object.spec.template as { spec?: PodSpec } | undefined)?.spec;

describe('the Helm chart', () => {
  it.each(VALUES)('lints with %s.yaml (strict)', (values) => {
    const lint = spawnSync(HELM, ['lint', CHART, '--strict', '-f', valuesFile(values)], { encoding: 'utf8' });
    expect({ status: lint.status, output: lint.stdout + lint.stderr }).toMatchObject({ status: 0 });
  });

  it.each(VALUES)('renders with %s.yaml only objects that decode strictly into their Kubernetes API types', (values) => {
    const check = spawnSync(VALIDATE, [], { input: template(values), encoding: 'utf8' });
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
    expect(check.stdout).toMatch(/^\d+ objects valid, 0 invalid/);
  });

  it.each([
    ['minimal', 'readinessProbe:', 'readinesProbe:', /apps\/v1 Deployment\): .*unknown field "readinesProbe"/],
    ['keda-servicemonitor', 'minReplicaCount:', 'minReplicaCont:', /keda\.sh\/v1alpha1 ScaledObject\): .*unknown field "minReplicaCont"/],
    ['keda-servicemonitor', 'endpoints:', 'endpoint:', /monitoring\.coreos\.com\/v1 ServiceMonitor\): .*unknown field "endpoint"/],
  ])('fails the validator on a misspelt field (%s: %s → %s), so a passing render means something', (values, field, misspelt, message) => {
    const check = spawnSync(VALIDATE, [], { input: template(values).replace(field, misspelt), encoding: 'utf8' });
    expect(check.status).toBe(1);
    expect(check.stderr).toMatch(message);
  });

  it('makes a receiver with Service, HPA on CPU, probes and PDB, workers, a NetworkPolicy, and the migrations as a pre-install/pre-upgrade hook', () => {
    const objects = objectsOf(template('minimal'));
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual([
      'Deployment/webhooks-durable-webhooks-receiver',
      'Deployment/webhooks-durable-webhooks-worker',
      'HorizontalPodAutoscaler/webhooks-durable-webhooks-receiver',
      'Job/webhooks-durable-webhooks-migrate',
      // On by default: the metrics ports open only to Prometheus's namespaces.
      'NetworkPolicy/webhooks-durable-webhooks',
      'PodDisruptionBudget/webhooks-durable-webhooks-receiver',
      'Service/webhooks-durable-webhooks-receiver',
      'Service/webhooks-durable-webhooks-receiver-admin',
    ]);
    const receiver = podOf(objects.find((object) => object.metadata.name.endsWith('-receiver') && object.kind === 'Deployment')!)!.containers[0]!;
    expect(receiver).toMatchObject({ readinessProbe: { httpGet: { path: '/readyz' } }, livenessProbe: { httpGet: { path: '/healthz' } } });
    const job = objects.find((object) => object.kind === 'Job')!;
    expect(job.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade' });
    expect(podOf(job)!.containers[0]).toMatchObject({ command: ['node', 'dist/src/cli/index.js', 'migrate'] });
  });

  it("scales workers with KEDA's Temporal scaler on the task queue's backlog, and adds a ServiceMonitor and a NetworkPolicy", () => {
    const objects = objectsOf(template('keda-servicemonitor'));
    const scaled = objects.find((object) => object.kind === 'ScaledObject')!;
    expect(scaled.spec).toMatchObject({
      minReplicaCount: 1,
      maxReplicaCount: 20,
      triggers: [{ type: 'temporal', metadata: { taskQueue: 'webhooks', namespace: 'webhooks', targetQueueSize: '10', activationTargetQueueSize: '0' } }],
    });
    const worker = objects.find((object) => object.kind === 'Deployment' && object.metadata.name.includes('-worker'))!;
    expect(worker.spec).not.toHaveProperty('replicas');
    expect(objects.map((object) => object.kind)).toEqual(expect.arrayContaining(['ServiceMonitor', 'NetworkPolicy']));
  });

  it('versions workers by image tag: a Deployment per build that Helm keeps, scaled on its own backlog, made current by a post-install/post-upgrade/post-rollback hook', () => {
    const build = (tag: string, ...extra: string[]) => objectsOf(template('keda-servicemonitor', '--set', `image.tag=${tag}`, ...extra));
    const [first, second] = [build('1.4.2'), build('1.5.0')];
    const workerOf = (objects: K8sObject[]) => objects.find((object) => object.kind === 'Deployment' && object.metadata.name.includes('-worker'))!;
    // The next build is a Deployment beside the old one, not a rolling update of it: the old build runs until it drains.
    expect([workerOf(first).metadata.name, workerOf(second).metadata.name]).toEqual([
      'webhooks-durable-webhooks-worker-1-4-2',
      'webhooks-durable-webhooks-worker-1-5-0',
    ]);
    expect(workerOf(first).metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(workerOf(first).spec.selector).toEqual({
      matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'worker', 'durable-webhooks/build': '1-4-2' }),
    });
    expect(podOf(workerOf(first))!.containers[0]!.env).toEqual(
      expect.arrayContaining([
        { name: 'WORKER_DEPLOYMENT_NAME', value: 'webhooks-durable-webhooks' },
        { name: 'WORKER_BUILD_ID', value: '1.4.2' },
      ]),
    );
    const scaled = first.find((object) => object.kind === 'ScaledObject')!;
    expect(scaled.metadata.name).toBe('webhooks-durable-webhooks-worker-1-4-2');
    // docs/kubernetes.md deletes a drained build's Deployment and ScaledObject by this label.
    for (const kept of [workerOf(first), scaled])
      expect(kept.metadata.labels).toMatchObject({ 'app.kubernetes.io/instance': 'webhooks', 'durable-webhooks/build': '1-4-2' });
    expect(scaled.spec).toMatchObject({
      scaleTargetRef: { name: 'webhooks-durable-webhooks-worker-1-4-2' },
      triggers: [{ metadata: { workerDeploymentName: 'webhooks-durable-webhooks', workerDeploymentBuildId: '1.4.2' } }],
    });
    const promote = first.find((object) => object.kind === 'Job' && object.metadata.name.endsWith('-promote'))!;
    expect(promote.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'post-install,post-upgrade,post-rollback' });
    expect(podOf(promote)!.containers[0]).toMatchObject({
      command: ['node', 'dist/src/cli/index.js', 'workers', 'promote', '--wait', '4m'],
      env: expect.arrayContaining([{ name: 'WORKER_BUILD_ID', value: '1.4.2' }]),
    });
    // Ramping by hand: no hook; unversioned (the default): one Deployment, rolled, and no version variables.
    expect(build('1.4.2', '--set', 'worker.versioning.promote=false').some((object) => object.metadata.name.endsWith('-promote'))).toBe(false);
    const unversioned = objectsOf(template('minimal'));
    expect(podOf(workerOf(unversioned))!.containers[0]!.env!.map((variable) => variable.name)).not.toContain('WORKER_BUILD_ID');
    expect(workerOf(unversioned).metadata.annotations).toBeUndefined();
  });

  it('connects to Temporal Cloud with the API key from a Secret, and with mTLS from a kubernetes.io/tls Secret', () => {
    const cloud = podOf(objectsOf(template('temporal-cloud')).find((object) => object.kind === 'Deployment')!)!.containers[0]!;
    expect(cloud.env).toEqual(
      expect.arrayContaining([
        { name: 'TEMPORAL_TLS', value: 'true' },
        { name: 'TEMPORAL_API_KEY', valueFrom: { secretKeyRef: { name: 'temporal-cloud', key: 'TEMPORAL_API_KEY' } } },
      ]),
    );
    const mtls = podOf(
      objectsOf(
        template(
          'minimal',
          '--set',
          'temporal.tls.enabled=true',
          '--set',
          'temporal.tls.existingSecret=temporal-client',
          '--set',
          'temporal.tls.serverCA=true',
        ),
      ).find((object) => object.kind === 'Deployment')!,
    )!;
    expect(mtls.containers[0]!.env).toEqual(
      expect.arrayContaining([
        { name: 'TEMPORAL_TLS_CLIENT_CERT_PATH', value: '/etc/temporal-tls/tls.crt' },
        { name: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', value: '/etc/temporal-tls/ca.crt' },
      ]),
    );
  });

  it('takes secrets only from an existing Secret, and runs every pod as non-root on a read-only root filesystem', () => {
    const refused = spawnSync(HELM, ['template', 'webhooks', CHART, '--set', 'image.repository=x'], { encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('existingSecret is required');
    for (const values of VALUES) {
      for (const pod of objectsOf(template(values))
        .map(podOf)
        .filter((pod): pod is PodSpec => pod !== undefined)) {
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
        for (const container of pod.containers) {
          expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
          expect(container.envFrom).toBeUndefined();
          for (const variable of container.env ?? [])
            if (variable.valueFrom !== undefined && variable.name !== 'TEMPORAL_API_KEY')
              expect(variable.valueFrom).toEqual({ secretKeyRef: { name: 'durable-webhooks', key: variable.name, optional: true } });
          // A value written in the manifest is never a secret: those come from the Secrets (SIGNING_SECRETS_DIR is where one is mounted).
          for (const variable of container.env ?? [])
            if (variable.value !== undefined && variable.name !== 'SIGNING_SECRETS_DIR')
              expect(variable.name).not.toMatch(/SECRET|TOKEN|KEY|PASSWORD|DATABASE_URL/);
        }
      }
    }
  });

  it('gives each process only the keys of the Secret it reads: the receiver no API key, the workers no signing secret or token, the hooks only theirs', () => {
    const objects = objectsOf(
      template('keda-servicemonitor', '--set', 'worker.versioning.enabled=true', '--set', 'receiver.extraSecretKeys={CONNECT_WEBHOOK_SECRET}'),
    );
    const secretKeys = (match: (object: K8sObject) => boolean) =>
      podOf(objects.find(match)!)!
        .containers[0]!.env!.filter((variable) => variable.valueFrom !== undefined && variable.name !== 'TEMPORAL_API_KEY')
        .map((variable) => variable.name);
    const receiver = secretKeys((object) => object.kind === 'Deployment' && object.metadata.name.endsWith('-receiver'));
    const worker = secretKeys((object) => object.kind === 'Deployment' && object.metadata.name.includes('-worker'));
    expect(receiver).toEqual(expect.arrayContaining(['DATABASE_URL', 'PAYLOAD_ENCRYPTION_KEYS', 'ADMIN_TOKEN', 'API_TOKENS', 'CONNECT_WEBHOOK_SECRET']));
    for (const workerOnly of ['STRIPE_SECRET_KEY', 'RESEND_API_KEY', 'SMTP_URL', 'GITHUB_TOKEN', 'PADDLE_API_KEY', 'SQUARE_ACCESS_TOKEN']) {
      expect(receiver).not.toContain(workerOnly);
      expect(worker).toContain(workerOnly);
    }
    expect(worker.filter((name) => /WEBHOOK|SIGNING|HMAC|TOKENS?$|AUTH_TOKEN/.test(name) && name !== 'GITHUB_TOKEN' && name !== 'SQUARE_ACCESS_TOKEN')).toEqual(
      [],
    );
    expect(secretKeys((object) => object.kind === 'Job' && object.metadata.name.endsWith('-migrate'))).toEqual(['DATABASE_URL']);
    expect(secretKeys((object) => object.kind === 'Job' && object.metadata.name.endsWith('-promote'))).toEqual([]);
  });

  it("mounts receiver.signingSecret whole, read-only, as SIGNING_SECRETS_DIR, in the receiver alone, and names no kind's variable", () => {
    const rendered = template('minimal');
    const objects = objectsOf(rendered);
    const receiverPod = podOf(objects.find((object) => object.kind === 'Deployment' && object.metadata.name.endsWith('-receiver'))!)! as PodSpec & {
      volumes: Array<{ name: string; secret?: { secretName: string; items?: unknown[] } }>;
    };
    const receiver = receiverPod.containers[0]! as Container & { volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }> };
    // Every key of the Secret, so a kind added tomorrow needs no change here.
    expect(receiverPod.volumes.find((volume) => volume.name === 'signing-secrets')).toEqual({
      name: 'signing-secrets',
      secret: { secretName: 'durable-webhooks-signing' },
    });
    expect(receiver.volumeMounts).toEqual(
      expect.arrayContaining([{ name: 'signing-secrets', mountPath: '/etc/durable-webhooks/signing-secrets', readOnly: true }]),
    );
    expect(receiver.env).toEqual(expect.arrayContaining([{ name: 'SIGNING_SECRETS_DIR', value: '/etc/durable-webhooks/signing-secrets' }]));
    for (const object of objects.filter((object) => podOf(object) && !object.metadata.name.endsWith('-receiver')))
      expect(JSON.stringify(podOf(object))).not.toContain('signing');
    // What the kinds declare (src/providers/<kind>.ts): no rendered object names any of it.
    const declared = PROVIDERS.flatMap((provider) =>
      provider.builtIn ? [provider.builtIn.secretEnv, provider.builtIn.publicKeyEnv, provider.builtIn.urlEnv].filter(Boolean) : [],
    );
    expect(declared.length).toBeGreaterThan(12);
    const everything = JSON.stringify(objects);
    expect(declared.filter((name) => everything.includes(name!))).toEqual([]);
    const check = spawnSync(VALIDATE, [], { input: rendered, encoding: 'utf8' });
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it.each([
    [['--set', 'receiver.signingSecret='], /receiver\.signingSecret is required: a Secret holding only the signing secrets/],
    [['--set', 'receiver.signingSecretKeys={STRIPE_WEBHOOK_SECRET}'], /receiver\.signingSecretKeys and receiver\.secretFiles are gone/],
    [['--set', 'receiver.secretFiles={STRIPE_WEBHOOK_SECRET}'], /receiver\.signingSecretKeys and receiver\.secretFiles are gone/],
  ])('refuses to render a receiver that would verify nothing (%j)', (extra, message) => {
    const render = spawnSync(HELM, ['template', 'webhooks', CHART, '-f', valuesFile('minimal'), ...extra], { encoding: 'utf8' });
    expect(render.status).toBe(1);
    expect(render.stderr).toMatch(message);
  });

  it('templates TRUST_PROXY, and an egress policy of DNS and the listed destinations when enabled', () => {
    const rendered = objectsOf(
      template(
        'minimal',
        '--set',
        'receiver.trustProxy=1',
        '--set',
        'networkPolicy.egress.enabled=true',
        '--set',
        'networkPolicy.egress.to[0].ipBlock.cidr=10.20.0.0/16',
      ),
    );
    const receiver = podOf(rendered.find((object) => object.kind === 'Deployment' && object.metadata.name.endsWith('-receiver'))!)!.containers[0]!;
    expect(receiver.env).toEqual(expect.arrayContaining([{ name: 'TRUST_PROXY', value: '1' }]));
    const policy = rendered.find((object) => object.kind === 'NetworkPolicy')!;
    expect(policy.spec).toMatchObject({
      policyTypes: ['Ingress', 'Egress'],
      egress: [
        {
          ports: [
            { port: 53, protocol: 'UDP' },
            { port: 53, protocol: 'TCP' },
          ],
        },
        { to: [{ ipBlock: { cidr: '10.20.0.0/16' } }] },
      ],
    });
    const check = spawnSync(VALIDATE, [], {
      input: template('minimal', '--set', 'networkPolicy.egress.enabled=true', '--set', 'networkPolicy.egress.to[0].ipBlock.cidr=10.20.0.0/16'),
      encoding: 'utf8',
    });
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
    const closed = objectsOf(template('minimal'));
    expect(closed.find((object) => object.kind === 'NetworkPolicy')!.spec).toMatchObject({ policyTypes: ['Ingress'] });
    expect(
      podOf(closed.find((object) => object.kind === 'Deployment' && object.metadata.name.endsWith('-receiver'))!)!.containers[0]!.env!.map(
        (variable) => variable.name,
      ),
    ).not.toContain('TRUST_PROXY');
  });

  it('serves /admin, /codec and /v1 on the admin port, reachable only inside the cluster; with adminPort 0, on the webhook port', () => {
    const objects = objectsOf(template('minimal'));
    const receiver = podOf(objects.find((object) => object.kind === 'Deployment' && object.metadata.name.endsWith('-receiver'))!)!.containers[0]!;
    expect(receiver.env).toEqual(expect.arrayContaining([{ name: 'ADMIN_PORT', value: '3001' }]));
    const admin = objects.find((object) => object.kind === 'Service' && object.metadata.name.endsWith('-receiver-admin'))!;
    expect(admin.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'admin', targetPort: 'admin' }] });
    const webhooks = objects.find((object) => object.kind === 'Service' && object.metadata.name.endsWith('-receiver'))!;
    expect(webhooks.spec.ports).toEqual([expect.objectContaining({ name: 'http', targetPort: 'http' })]);
    const policy = objects.find((object) => object.kind === 'NetworkPolicy')!;
    expect(policy.spec.ingress).toEqual(expect.arrayContaining([{ from: [{ podSelector: {} }], ports: [{ port: 3001 }] }]));

    const together = objectsOf(template('minimal', '--set', 'receiver.adminPort=0'));
    expect(together.some((object) => object.metadata.name.endsWith('-receiver-admin'))).toBe(false);
    const alone = podOf(together.find((object) => object.kind === 'Deployment' && object.metadata.name.endsWith('-receiver'))!)!.containers[0]!;
    expect(alone.env!.map((variable) => variable.name)).not.toContain('ADMIN_PORT');
  });

  it('sets only environment variables the processes read, and the ones each needs to run here', () => {
    const read = variablesTheCodeReads();
    // A signing secret's `_PREVIOUS` companion is read wherever the secret is (src/config/sources.ts).
    const isRead = (name: string): boolean =>
      read.has(name) ||
      [...read].some((pattern) => pattern.endsWith('*') && name.startsWith(pattern.slice(0, -2))) ||
      [/_PREVIOUS$/, /_FILE$/].some((suffix) => suffix.test(name) && isRead(name.replace(suffix, '')));
    for (const values of VALUES) {
      for (const object of objectsOf(
        template(values, '--set', 'temporal.tls.enabled=true', '--set', 'temporal.tls.existingSecret=tls', '--set', 'temporal.tls.serverName=temporal'),
      )) {
        for (const container of podOf(object)?.containers ?? []) {
          const names = (container.env ?? []).map((variable) => variable.name);
          expect({ container: container.name, unread: names.filter((name) => !isRead(name)) }).toEqual({ container: container.name, unread: [] });
          expect(names).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'DATA_DIR']));
          if (container.name === 'receiver') expect(names).toEqual(expect.arrayContaining(['PORT', 'RECEIVER_METRICS_ADDRESS']));
          if (container.name === 'worker') expect(names).toContain('WORKER_METRICS_ADDRESS');
        }
      }
    }
  });
});
