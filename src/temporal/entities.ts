import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { CARRIED_REQUESTS, entityActionSignal, entityStateQuery, entityWorkflowId, type EntityAction, type EntityState } from '../../contracts';
import { entityRecord, listEntities, sourcesOfKey, type EntityRecord } from '../db/entities';
import type { Database } from '../db/database';
import { OperationRejectedError } from '../core/errors';
import { coalesceWindow, flowNamed } from '../flows';
import type { EventOperations } from './operations';

/** A key as operators see it: what its entity knows (or, with none running, the database: the event holding the key runs), and where to look. */
export interface EntityView extends Omit<EntityState, 'applied' | 'superseded'> {
  workflowId: string;
  /** Whether its entity workflow runs now; a key at rest has none until its next event. */
  open: boolean;
  /** Events applied and superseded by the current entity run. */
  applied: number | null;
  superseded: number | null;
  uiUrl: string;
}

/**
 * `durable-webhooks entities` and `/admin/entities`: a keyed flow's keys (docs/entities.md), by
 * flow, source and key; skip or retry the failed event a key waits on.
 */
export class EntityOperations {
  constructor(
    private readonly client: Client,
    private readonly events: EventOperations,
    private readonly db: Database | undefined,
  ) {}

  /** Keys, most recently changed first (the database's record of each): of one flow, or the parked ones. */
  async list(filter: { flow?: string; parked?: boolean; limit?: number }): Promise<EntityRecord[]> {
    if (filter.flow !== undefined) this.keyedFlow(filter.flow);
    return listEntities(this.requireDatabase(), filter);
  }

  async show(flow: string, key: string, source?: string): Promise<EntityView> {
    const declaration = this.keyedFlow(flow);
    const at = source ?? (await this.onlySource(flow, key));
    const workflowId = entityWorkflowId(flow, at, key);
    const uiUrl = this.events.uiLink(workflowId);
    try {
      const handle = this.client.workflow.getHandle(workflowId);
      if ((await handle.describe()).status.name === 'RUNNING') return { ...(await handle.query(entityStateQuery)), workflowId, open: true, uiUrl };
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    const record = this.db ? await entityRecord(this.db, { flow, source: at, key }) : null;
    if (!record) throw new OperationRejectedError(`${flow} has no key ${key} at ${at}: none of its events has had a turn.`);
    return {
      flow,
      source: at,
      key,
      order: declaration.order,
      coalesce: declaration.order === 'coalesce' ? coalesceWindow(declaration) : null,
      burst: null,
      last: record.last,
      pending: [],
      running: record.running,
      parked: record.parked,
      applied: null,
      superseded: null,
      holdsKey: record.holder === workflowId,
      carry: CARRIED_REQUESTS,
      stored: null,
      workflowId,
      open: false,
      uiUrl,
    };
  }

  /** The key goes on without its failed event, which stays failed (an `events retry` of it later runs it alone). */
  async skip(flow: string, key: string, options: { source?: string; by: string; reason: string }): Promise<EntityView> {
    return this.act(flow, key, { action: 'skip', by: options.by, reason: options.reason }, options.source);
  }

  /** The failed event runs again from just before its failure (`events retry`), in its key's turn; the key then goes on. */
  async retry(flow: string, key: string, options: { source?: string; by: string; reason: string }): Promise<EntityView> {
    const view = await this.act(flow, key, { action: 'retry', by: options.by, reason: options.reason }, options.source);
    const parked = view.parked!;
    const result = await this.events.apply('retry', parked.workflowId, { reason: options.reason, requestId: randomUUID() });
    if (result.outcome === 'failed') throw new OperationRejectedError(`The key runs ${parked.eventId} again, but its retry failed: ${result.detail}.`);
    return view;
  }

  private async act(flow: string, key: string, action: EntityAction, source?: string): Promise<EntityView> {
    if (action.reason.trim() === '')
      throw new OperationRejectedError(`Give a reason to ${action.action} the event a key waits on; it is kept in the entity's history.`);
    const view = await this.show(flow, key, source);
    if (!view.open || !view.parked) throw new OperationRejectedError(`${flow} key ${key} waits on no failed event: nothing to ${action.action}.`);
    await this.client.workflow.getHandle(view.workflowId).signal(entityActionSignal, action);
    return view;
  }

  private keyedFlow(name: string) {
    const flow = flowNamed(name);
    if (!flow?.key) throw new OperationRejectedError(`${name} is not a keyed flow; durable-webhooks flows shows which flows have a key.`);
    return flow.key;
  }

  /** The source of a flow's key when only one source has it; naming it is needed otherwise. */
  private async onlySource(flow: string, key: string): Promise<string> {
    const sources = await sourcesOfKey(this.requireDatabase(), flow, key);
    if (sources.length === 1) return sources[0]!;
    throw new OperationRejectedError(
      sources.length === 0
        ? `${flow} has no key ${key}: none of its events has had a turn.`
        : `${flow} has key ${key} at ${sources.join(' and ')}: name one with --source.`,
    );
  }

  private requireDatabase(): Database {
    if (!this.db) throw new OperationRejectedError('Entities are recorded in the database: set DATABASE_URL.');
    return this.db;
  }
}
