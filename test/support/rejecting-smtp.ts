import { SMTPServer } from 'smtp-server';
import { freePort } from './ports';

/**
 * An SMTP server (nodemailer's `smtp-server`) that refuses the recipients `rejects` picks as Postfix
 * does, quoting the address in its reply: `550 5.1.1 <alice@example.com>: Recipient address
 * rejected: User unknown in local recipient table`. Mailpit's refusals do not quote it.
 */
export async function startRejectingSmtp(rejects: (address: string) => boolean) {
  const refused: string[] = [];
  const accepted: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!rejects(address.address)) {
        accepted.push(address.address);
        callback();
        return;
      }
      refused.push(address.address);
      const error = Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown in local recipient table`), {
        responseCode: 550,
      });
      callback(error);
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => callback());
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    smtpUrl: `smtp://127.0.0.1:${port}`,
    /** Recipients refused, and accepted, in order. */
    refused,
    accepted,
    close: () => new Promise<void>((resolve) => server.close(resolve)),
  };
}
