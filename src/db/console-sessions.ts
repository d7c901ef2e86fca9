import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from './database';

/**
 * Console sign-ins: an admin or viewer token exchanged for a random session ID (the cookie), stored
 * by its hash so the table holds nothing a reader could sign in with. Every receiver finds every
 * session: a console behind a load balancer works whichever receiver answers. A session is bound to
 * the hash of the token that made it: once that token is no longer configured with that role, the
 * session is worth nothing, and the next start deletes it.
 */

export type ConsoleRole = 'admin' | 'viewer';

export interface ConsoleSession {
  tokenName: string;
  role: ConsoleRole;
  /** SHA-256 (hex) of the token that signed in. */
  tokenSha256: string;
  /** The session's CSRF token: every POST carries it in a form field. */
  csrf: string;
}

/** SHA-256 (hex) of a session ID or a token: what the table keeps instead of either. */
export const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

export async function createSession(
  db: Queryable,
  signIn: { tokenName: string; role: ConsoleRole; tokenSha256: string; ttlMs: number },
): Promise<{ id: string } & ConsoleSession> {
  const id = randomBytes(32).toString('base64url');
  const csrf = randomBytes(32).toString('base64url');
  await db.query(`DELETE FROM console_sessions WHERE expires_at < now()`);
  await db.query(
    `INSERT INTO console_sessions (id_sha256, token_name, role, token_sha256, csrf, expires_at) VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond')`,
    [hashOf(id), signIn.tokenName, signIn.role, signIn.tokenSha256, csrf, signIn.ttlMs],
  );
  return { id, tokenName: signIn.tokenName, role: signIn.role, tokenSha256: signIn.tokenSha256, csrf };
}

export async function findSession(db: Queryable, id: string): Promise<ConsoleSession | undefined> {
  const { rows } = await db.query<{ token_name: string; role: ConsoleRole; token_sha256: string; csrf: string }>(
    'SELECT token_name, role, token_sha256, csrf FROM console_sessions WHERE id_sha256 = $1 AND expires_at > now()',
    [hashOf(id)],
  );
  return rows[0] && { tokenName: rows[0].token_name, role: rows[0].role, tokenSha256: rows[0].token_sha256, csrf: rows[0].csrf };
}

/** A token a session may be bound to: its hash and the role it signs in with. */
export interface SessionToken {
  tokenSha256: string;
  role: ConsoleRole;
}

/** Deletes every session whose token is not among `current` with the same role (removed or demoted); returns how many. */
export async function deleteOrphanSessions(db: Queryable, current: readonly SessionToken[]): Promise<number> {
  const { rows } = await db.query(
    `DELETE FROM console_sessions s WHERE NOT EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) AS t(token_sha256, role) WHERE t.token_sha256 = s.token_sha256 AND t.role = s.role) RETURNING 1`,
    [current.map((token) => token.tokenSha256), current.map((token) => token.role)],
  );
  return rows.length;
}

/** A session as `console sessions list` shows it: never its ID or its token. */
export interface SessionListing {
  tokenName: string;
  role: ConsoleRole;
  createdAt: Date;
  expiresAt: Date;
}

export async function listSessions(db: Queryable): Promise<SessionListing[]> {
  const { rows } = await db.query<SessionListing>(
    `SELECT token_name AS "tokenName", role, created_at AS "createdAt", expires_at AS "expiresAt" FROM console_sessions WHERE expires_at > now() ORDER BY created_at`,
  );
  return rows;
}

/** Ends every session, or those of one token name; returns how many. */
export async function revokeSessions(db: Queryable, which: { all: true } | { tokenName: string }): Promise<number> {
  const { rows } =
    'all' in which
      ? await db.query('DELETE FROM console_sessions RETURNING 1')
      : await db.query('DELETE FROM console_sessions WHERE token_name = $1 RETURNING 1', [which.tokenName]);
  return rows.length;
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
