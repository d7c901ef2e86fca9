import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { orderCreated } from '../support/events';
import { spawnNpmScript, runCli } from '../support/processes';
import { post } from '../support/stack';
import { startTopology, type Topology } from '../support/topology';

/**
 * The production topology over mTLS: `npm run cluster` serves its frontend with a certificate and
 * requires client certificates from the test's client CA; every process (receivers, workers, the
 * CLI, the cluster's own setup) connects through Temporal's standard variables (TEMPORAL_TLS_*).
 * Certificates are made here with openssl.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'dw-tls-'));
const file = (name: string) => path.join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

/** A CA, and a certificate it signs for `cn` (with `san` as subjectAltName when given). */
function authority(name: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    file(`${name}.key`),
    '-out',
    file(`${name}.crt`),
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
  );
}
function certificate(name: string, ca: string, cn: string, extensions: string): void {
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    file(`${name}.key`),
    '-out',
    file(`${name}.csr`),
    '-subj',
    `/CN=${cn}`,
  );
  writeFileSync(file(`${name}.ext`), extensions);
  openssl(
    'x509',
    '-req',
    '-in',
    file(`${name}.csr`),
    '-CA',
    file(`${ca}.crt`),
    '-CAkey',
    file(`${ca}.key`),
    '-CAcreateserial',
    '-out',
    file(`${name}.crt`),
    '-days',
    '2',
    '-extfile',
    file(`${name}.ext`),
  );
}

authority('server-ca');
authority('client-ca');
authority('rogue-ca');
certificate('server', 'server-ca', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
certificate('client', 'client-ca', 'durable-webhooks', 'extendedKeyUsage=clientAuth\n');
certificate('rogue', 'rogue-ca', 'durable-webhooks', 'extendedKeyUsage=clientAuth\n');

// The certificate names localhost: clients check the server against that name (an IP as TLS server name is not allowed by RFC 6066).
const clientTls = {
  TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.crt'),
  TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key'),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('server-ca.crt'),
  TEMPORAL_TLS_SERVER_NAME: 'localhost',
};
let topology: Topology;
beforeAll(async () => {
  topology = await startTopology(
    { ...clientTls, ACKNOWLEDGE: 'temporal' },
    {
      clusterEnv: {
        TEMPORAL_CLUSTER_TLS_CERT_PATH: file('server.crt'),
        TEMPORAL_CLUSTER_TLS_KEY_PATH: file('server.key'),
        TEMPORAL_CLUSTER_TLS_CLIENT_CA_PATH: file('client-ca.crt'),
      },
    },
  );
}, 240_000);
afterAll(() => topology?.close());

it('runs a flow end to end over mTLS: receiver, worker, CLI and the cluster itself', async () => {
  const order = orderCreated();
  expect((await post(`${topology.receivers[0]!.url}/webhooks/${order.path}`, order.headers, order.body)).status).toBe(202);
  expect(await topology.client.workflow.getHandle(order.id).result()).toMatchObject({ outcome: 'charged' });
  expect(topology.stripe.charges().filter((charge) => charge.metadata.event_id === order.id)).toHaveLength(1);
  const shown = await runCli(['events', 'show', order.id, '--json'], topology.env);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.output)).toMatchObject({ status: 'completed' });
});

it('refuses a client without a certificate, or with one from another CA, in one clear line', async () => {
  const withoutCertificate = await runCli(['events', 'show', 'evt_any'], {
    ...topology.env,
    TEMPORAL_TLS_CLIENT_CERT_PATH: undefined,
    TEMPORAL_TLS_CLIENT_KEY_PATH: undefined,
  });
  expect(withoutCertificate.code).toBe(1);
  expect(withoutCertificate.error).toMatch(/^Failed to describe workflow: 14 UNAVAILABLE: .*certificate required/);

  const rogue = spawnNpmScript('worker', {
    ...topology.env,
    TEMPORAL_TLS_CLIENT_CERT_PATH: file('rogue.crt'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: file('rogue.key'),
    WORKER_METRICS_ADDRESS: '',
  });
  expect(await rogue.exited).toBe(1);
  const lines = rogue.output().trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({
    level: 'error',
    message: expect.stringMatching(
      /^stopped: cannot connect to Temporal at 127\.0\.0\.1:\d+ over mTLS \(is the client certificate one the server trusts\?\): Failed to call GetSystemInfo/,
    ),
  });
});
