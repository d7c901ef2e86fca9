import type { Client } from '@temporalio/client';
import type { Database } from '../../src/db/database';

/** Every row of every table, as JSON text (bytea as hex), that contains the marker as text or as bytes. */
export async function rowsHolding(db: Database, marker: string): Promise<string[]> {
  const { rows: tables } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const found: string[] = [];
  const hex = Buffer.from(marker).toString('hex');
  for (const { table_name: table } of tables) {
    const { rows } = await db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table}" t`);
    for (const { row } of rows) if (row.includes(marker) || row.includes(hex)) found.push(`${table}: ${row.slice(0, 200)}`);
  }
  return found;
}

/**
 * All Temporal says about a workflow ID, as text a reader could see: every run's history with each
 * payload's bytes decoded (inputs, results, failures' encoded attributes, the UI summary and
 * details), its description, and its current details while a worker answers the metadata query.
 */
export async function temporalText(client: Client, workflowId: string): Promise<string> {
  const texts: string[] = [];
  const collect = (value: unknown): unknown =>
    JSON.stringify(value, (_name, item: unknown) => {
      if (item instanceof Uint8Array) {
        texts.push(Buffer.from(item).toString('utf8'));
        return `<${item.length} bytes>`;
      }
      return item;
    });
  // The latest run by ID (visibility may not list it yet), and every run visibility lists.
  const runs = new Set([(await client.workflow.getHandle(workflowId).describe()).runId]);
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.add(execution.runId);
  for (const runId of runs) {
    const handle = client.workflow.getHandle(workflowId, runId);
    texts.push(String(collect((await handle.fetchHistory()).events)));
    const description = await handle.describe();
    texts.push(String(collect(description.raw)), (await description.staticSummary()) ?? '', (await description.staticDetails()) ?? '');
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata').catch(() => undefined);
    texts.push(metadata?.currentDetails ?? '');
  }
  return texts.join('\n');
}
