import { randomBytes } from 'node:crypto';
import type { Queryable } from './database';

/** A subscriber to our API's messages, as the API shows it. The secret is shown on create and rotate only. */
export interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  /** Event types it receives; null means all. */
  eventTypes: string[] | null;
  disabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The secrets that sign deliveries to an endpoint: the current one, and the previous one for 24 h after a rotation. */
export interface EndpointSecrets {
  url: string;
  secrets: string[];
  disabled: boolean;
  deleted: boolean;
  /** What is posted: `standard-webhooks` (`{type, timestamp, data}`), or `payload` as it is (a Slack incoming webhook's `{text}`). */
  bodyFormat: BodyFormat;
}

export type BodyFormat = 'standard-webhooks' | 'payload';

/** After a rotation, the old secret keeps signing alongside the new one this long. */
export const PREVIOUS_SECRET_GRACE_HOURS = 24;

type Row = {
  id: string;
  url: string;
  description: string | null;
  event_types: string[] | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
};

const toEndpoint = (row: Row): Endpoint => ({
  id: row.id,
  url: row.url,
  description: row.description,
  eventTypes: row.event_types,
  disabled: row.disabled_at !== null,
  disabledReason: row.disabled_reason,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** A Standard Webhooks signing secret: `whsec_` and 24 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export async function createEndpoint(db: Queryable, scope: string, input: { url: string; description: string | null; eventTypes: string[] | null }) {
  const secret = newSecret();
  const { rows } = await db.query<Row>(
    `INSERT INTO endpoints (id, token_scope, url, description, event_types, secret) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [`ep_${randomBytes(12).toString('hex')}`, scope, input.url, input.description, input.eventTypes && JSON.stringify(input.eventTypes), secret],
  );
  return { ...toEndpoint(rows[0]!), secret };
}

export async function listEndpoints(db: Queryable, scope: string): Promise<Endpoint[]> {
  const { rows } = await db.query<Row>('SELECT * FROM endpoints WHERE token_scope = $1 AND deleted_at IS NULL ORDER BY created_at', [scope]);
  return rows.map(toEndpoint);
}

export async function getEndpoint(db: Queryable, scope: string, id: string): Promise<Endpoint | undefined> {
  const { rows } = await db.query<Row>('SELECT * FROM endpoints WHERE token_scope = $1 AND id = $2 AND deleted_at IS NULL', [scope, id]);
  return rows[0] && toEndpoint(rows[0]);
}

export async function updateEndpoint(
  db: Queryable,
  scope: string,
  id: string,
  changes: { url?: string; description?: string | null; eventTypes?: string[] | null; disabled?: boolean },
): Promise<Endpoint | undefined> {
  const { rows } = await db.query<Row>(
    `UPDATE endpoints SET
       url = COALESCE($3, url),
       description = CASE WHEN $4::boolean THEN $5 ELSE description END,
       event_types = CASE WHEN $6::boolean THEN $7::jsonb ELSE event_types END,
       disabled_at = CASE WHEN $8::boolean IS NULL THEN disabled_at WHEN $8 THEN COALESCE(disabled_at, now()) ELSE NULL END,
       disabled_reason = CASE WHEN $8::boolean IS NULL THEN disabled_reason WHEN $8 THEN 'disabled through the API' ELSE NULL END,
       updated_at = now()
     WHERE token_scope = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
    [
      scope,
      id,
      changes.url ?? null,
      'description' in changes,
      changes.description ?? null,
      'eventTypes' in changes,
      changes.eventTypes ? JSON.stringify(changes.eventTypes) : null,
      changes.disabled ?? null,
    ],
  );
  return rows[0] && toEndpoint(rows[0]);
}

export async function deleteEndpoint(db: Queryable, scope: string, id: string): Promise<boolean> {
  const { rows } = await db.query('UPDATE endpoints SET deleted_at = now() WHERE token_scope = $1 AND id = $2 AND deleted_at IS NULL RETURNING id', [
    scope,
    id,
  ]);
  return rows.length > 0;
}

/** A new secret; the old one keeps signing alongside it for 24 hours, so receivers can switch over. */
export async function rotateSecret(db: Queryable, scope: string, id: string) {
  const secret = newSecret();
  const { rows } = await db.query<Row & { previous_secret_expires_at: Date }>(
    `UPDATE endpoints SET previous_secret = secret, secret = $3,
       previous_secret_expires_at = now() + make_interval(hours => $4), updated_at = now()
     WHERE token_scope = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
    [scope, id, secret, PREVIOUS_SECRET_GRACE_HOURS],
  );
  const row = rows[0];
  return row && { ...toEndpoint(row), secret, previousSecretExpiresAt: new Date(row.previous_secret_expires_at).toISOString() };
}

/** Endpoints of the scope that receive this event type now. */
export async function subscribedEndpoints(db: Queryable, scope: string, eventType: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM endpoints WHERE token_scope = $1 AND deleted_at IS NULL AND disabled_at IS NULL
       AND (event_types IS NULL OR event_types ? $2) ORDER BY created_at`,
    [scope, eventType],
  );
  return rows.map((row) => row.id);
}

/** What a delivery attempt needs: where to send and which secrets sign it. */
export async function endpointSecrets(db: Queryable, id: string): Promise<EndpointSecrets | undefined> {
  const { rows } = await db.query<{
    url: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_expires_at: Date | null;
    disabled_at: Date | null;
    deleted_at: Date | null;
    body_format: BodyFormat;
  }>('SELECT url, secret, previous_secret, previous_secret_expires_at, disabled_at, deleted_at, body_format FROM endpoints WHERE id = $1', [id]);
  const row = rows[0];
  if (!row) return undefined;
  const previousValid = row.previous_secret && row.previous_secret_expires_at && new Date(row.previous_secret_expires_at) > new Date();
  return {
    url: row.url,
    secrets: previousValid ? [row.secret, row.previous_secret!] : [row.secret],
    disabled: row.disabled_at !== null,
    deleted: row.deleted_at !== null,
    bodyFormat: row.body_format,
  };
}

/** An endpoint that answered 410 Gone is disabled; deliveries to it stop. */
export async function disableEndpoint(db: Queryable, id: string, reason: string): Promise<void> {
  await db.query('UPDATE endpoints SET disabled_at = COALESCE(disabled_at, now()), disabled_reason = $2, updated_at = now() WHERE id = $1', [id, reason]);
}

/**
 * Makes the one endpoint of an internal scope (alerts) match the configuration: created, pointed at
 * `url` with `secret` (its own generated one when none is given) and `bodyFormat`, and enabled
 * again, or deleted when `url` is unset. Internal scopes contain a
 * colon, which no API token's scope can, so no `/v1` caller sees or changes them.
 */
export async function syncInternalEndpoint(
  db: Queryable,
  scope: string,
  target: { url: string; secret?: string; bodyFormat: BodyFormat } | undefined,
): Promise<void> {
  const existing = await listEndpoints(db, scope);
  if (!target) {
    for (const endpoint of existing) await deleteEndpoint(db, scope, endpoint.id);
    return;
  }
  const [kept, ...extra] = existing;
  for (const endpoint of extra) await deleteEndpoint(db, scope, endpoint.id);
  const id = kept?.id ?? (await createEndpoint(db, scope, { url: target.url, description: 'alerts (configured by the receivers)', eventTypes: null })).id;
  await db.query(
    'UPDATE endpoints SET url = $2, secret = COALESCE($3, secret), body_format = $4, disabled_at = NULL, disabled_reason = NULL, updated_at = now() WHERE id = $1',
    [id, target.url, target.secret ?? null, target.bodyFormat],
  );
}
