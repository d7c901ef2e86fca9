import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { eventually } from './eventually';
import { freePort } from './ports';

const MAILPIT = path.resolve(__dirname, '../../.tools/bin/mailpit');

export interface MailpitMessage {
  ID: string;
  MessageID: string;
  Subject: string;
  To: Array<{ Address: string }>;
}

/** A real Mailpit (built by scripts/install-mailpit.sh): SMTP on one port, its HTTP API on another. */
export async function startMailpit() {
  if (!existsSync(MAILPIT)) throw new Error(`Mailpit is not at ${MAILPIT}; run bash scripts/install-mailpit.sh (npm test does).`);
  const smtpPort = await freePort();
  const httpPort = await freePort();
  const child = spawn(MAILPIT, ['--smtp', `127.0.0.1:${smtpPort}`, '--listen', `127.0.0.1:${httpPort}`, '--quiet', '--disable-version-check'], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const api = `http://127.0.0.1:${httpPort}/api/v1`;
  await eventually(
    'Mailpit answers',
    () =>
      fetch(`${api}/messages`).then(
        (response) => response.ok,
        () => false,
      ),
    { timeoutMs: 15_000, intervalMs: 100 },
  );
  return {
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    async messages(): Promise<MailpitMessage[]> {
      return ((await (await fetch(`${api}/messages`)).json()) as { messages: MailpitMessage[] }).messages;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
