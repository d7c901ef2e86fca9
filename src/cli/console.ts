import { Command } from 'commander';
import { listSessions, revokeSessions, type SessionListing } from '../db/console-sessions';
import { OperationRejectedError } from '../core/errors';
import { withDatabase } from './database';
import { jsonOption, print } from './output';

/**
 * `durable-webhooks console sessions list|revoke`: who is signed in to the console, and ending their
 * sessions. A session also ends by itself when its token is removed or given another role.
 */
export function consoleCommand(): Command {
  const sessions = new Command('sessions').description("The console's sign-ins: each token name, its role, and when its session began and ends.");
  sessions
    .command('list')
    .description('List the console sessions that have not expired (never their IDs or tokens).')
    .addOption(jsonOption('print the sessions as JSON'))
    .action(async (options: { json?: boolean }) =>
      withDatabase('console sessions list', async (db) => {
        const found = await listSessions(db);
        print(options.json, { sessions: found }, () => (found.length === 0 ? 'No console sessions.' : found.map(describeSession).join('\n')));
      }),
    );
  sessions
    .command('revoke')
    .description('End console sessions: every one (--all), or those signed in with one token (--name, as ADMIN_TOKENS or VIEWER_TOKENS names it).')
    .option('--all', 'every session')
    .option('--name <tokenName>', "the sessions of this token's name")
    .addOption(jsonOption('print how many were ended as JSON'))
    .action(async (options: { all?: boolean; name?: string; json?: boolean }) => {
      if (Boolean(options.all) === (options.name !== undefined)) throw new OperationRejectedError('Say which sessions to end: --all, or --name <tokenName>.');
      await withDatabase('console sessions revoke', async (db) => {
        const revoked = await revokeSessions(db, options.all ? { all: true } : { tokenName: options.name! });
        print(options.json, { revoked }, () => `Ended ${revoked} console session(s)${options.name !== undefined ? ` of "${options.name}"` : ''}.`);
      });
    });
  return new Command('console').description('Operate the event console.').addCommand(sessions);
}

function describeSession(session: SessionListing): string {
  return `${session.tokenName}  ${session.role}  since ${session.createdAt.toISOString()}, until ${session.expiresAt.toISOString()}`;
}
