import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from './database';

/**
 * Console sign-ins: an admin or viewer token exchanged for a random session ID (the cookie), stored
 * by its hash so the table holds nothing a reader could sign in with. Every receiver finds every
 * session: a console behind a load balancer works whichever receiver answers.
 */

export type ConsoleRole = 'admin' | 'viewer';

export interface ConsoleSession {
  tokenName: string;
  role: ConsoleRole;
  /** The session's CSRF token: every POST carries it in a form field. */
  csrf: string;
}

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');

export async function createSession(db: Queryable, signIn: { tokenName: string; role: ConsoleRole; ttlMs: number }): Promise<{ id: string } & ConsoleSession> {
  const id = randomBytes(32).toString('base64url');
  const csrf = randomBytes(32).toString('base64url');
  await db.query(`DELETE FROM console_sessions WHERE expires_at < now()`);
  await db.query(`INSERT INTO console_sessions (id_sha256, token_name, role, csrf, expires_at) VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')`, [
    hashOf(id),
    signIn.tokenName,
    signIn.role,
    csrf,
    signIn.ttlMs,
  ]);
  return { id, tokenName: signIn.tokenName, role: signIn.role, csrf };
}

export async function findSession(db: Queryable, id: string): Promise<ConsoleSession | undefined> {
  const { rows } = await db.query<{ token_name: string; role: ConsoleRole; csrf: string }>(
    'SELECT token_name, role, csrf FROM console_sessions WHERE id_sha256 = $1 AND expires_at > now()',
    [hashOf(id)],
  );
  return rows[0] && { tokenName: rows[0].token_name, role: rows[0].role, csrf: rows[0].csrf };
}

export async function deleteSession(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM console_sessions WHERE id_sha256 = $1', [hashOf(id)]);
}

/** One line of the console's audit trail: who did what to which event. */
export async function audit(db: Queryable, entry: { actor: string; action: string; target?: string; detail?: unknown }): Promise<void> {
  await db.query('INSERT INTO console_audit (actor, action, target, detail) VALUES ($1, $2, $3, $4)', [
    entry.actor,
    entry.action,
    entry.target ?? null,
    entry.detail === undefined ? null : JSON.stringify(entry.detail),
  ]);
}

export interface AuditEntry {
  at: Date;
  actor: string;
  action: string;
  target: string | null;
}

/** The audit trail of one event, newest first. */
export async function auditOf(db: Queryable, target: string): Promise<AuditEntry[]> {
  const { rows } = await db.query<AuditEntry>('SELECT at, actor, action, target FROM console_audit WHERE target = $1 ORDER BY id DESC LIMIT 50', [target]);
  return rows;
}
