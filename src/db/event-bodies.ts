import { createHash } from 'node:crypto';
import type { EventVia, ProviderKind } from '../../contracts';
import type { Queryable } from './database';

/** An event's body as it arrived: the raw bytes and the headers its signature needs. */
export interface ReceivedBody {
  raw: Buffer;
  contentType: string | undefined;
  /** The signature headers (lower-case names); empty for events listed from a provider's API. */
  signatureHeaders: Record<string, string>;
}

/** One row of the body store. `body` is null once the event was erased. */
export interface StoredBody {
  source: string;
  eventId: string;
  workflowId: string;
  provider: ProviderKind;
  via: EventVia;
  contentType: string | null;
  signatureHeaders: Record<string, string>;
  body: Buffer | null;
  size: number;
  sha256: string;
  receivedAt: Date;
  erasedAt: Date | null;
}

/**
 * Stores the body before the event's workflow starts, once per source and event ID: a redelivery,
 * or a retry after Temporal answered 503, stores nothing again, and an erased body stays erased.
 * `bodySha256` is the body's hash when the adapter computed it already (GitHub's, for replays).
 */
export async function storeBody(
  db: Queryable,
  event: { source: string; eventId: string; workflowId: string; provider: ProviderKind; via: EventVia; receivedAt: string; bodySha256?: string },
  body: ReceivedBody,
): Promise<void> {
  await db.query(
    `INSERT INTO event_bodies (source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (source, event_id) DO NOTHING`,
    [
      event.source,
      event.eventId,
      event.workflowId,
      event.provider,
      event.via,
      body.contentType ?? null,
      JSON.stringify(body.signatureHeaders),
      body.raw,
      body.raw.length,
      event.bodySha256 ?? createHash('sha256').update(body.raw).digest('hex'),
      event.receivedAt,
    ],
  );
}

export async function loadBody(db: Queryable, source: string, eventId: string): Promise<StoredBody | undefined> {
  const { rows } = await db.query<BodyRow>(`SELECT ${COLUMNS} FROM event_bodies WHERE source = $1 AND event_id = $2`, [source, eventId]);
  return rows[0] && fromRow(rows[0]);
}

/** The stored body of the event workflow with this ID. */
export async function loadBodyByWorkflowId(db: Queryable, workflowId: string): Promise<StoredBody | undefined> {
  const { rows } = await db.query<BodyRow>(`SELECT ${COLUMNS} FROM event_bodies WHERE workflow_id = $1`, [workflowId]);
  return rows[0] && fromRow(rows[0]);
}

const COLUMNS = 'source, event_id, workflow_id, provider, via, content_type, signature_headers, body, size, sha256, received_at, erased_at';

interface BodyRow {
  source: string;
  event_id: string;
  workflow_id: string;
  provider: ProviderKind;
  via: EventVia;
  content_type: string | null;
  signature_headers: Record<string, string>;
  body: Uint8Array | null;
  size: number;
  sha256: string;
  received_at: Date | string;
  erased_at: Date | string | null;
}

function fromRow(row: BodyRow): StoredBody {
  return {
    source: row.source,
    eventId: row.event_id,
    workflowId: row.workflow_id,
    provider: row.provider,
    via: row.via,
    contentType: row.content_type,
    signatureHeaders: row.signature_headers,
    body: row.body && Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength),
    size: row.size,
    sha256: row.sha256,
    receivedAt: new Date(row.received_at),
    erasedAt: row.erased_at === null ? null : new Date(row.erased_at),
  };
}
