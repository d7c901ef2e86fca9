import { spawn } from 'node:child_process';
import { eventually } from './eventually';
import { goTool } from './go-tools';
import { freePort } from './ports';

export interface MailpitMessage {
  ID: string;
  MessageID: string;
  Subject: string;
  To: Array<{ Address: string }>;
}

/** A real Mailpit (built by scripts/install-mailpit.sh when missing: its caller's hook allows GO_TOOL_BUILD_MS): SMTP on one port, its HTTP API on another. */
export async function startMailpit() {
  const mailpit = await goTool('mailpit');
  const smtpPort = await freePort();
  const httpPort = await freePort();
  const child = spawn(mailpit, ['--smtp', `127.0.0.1:${smtpPort}`, '--listen', `127.0.0.1:${httpPort}`, '--quiet', '--disable-version-check'], {
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
