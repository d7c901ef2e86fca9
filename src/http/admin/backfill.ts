import express from 'express';
import type { BackfillInput } from '../../../contracts';
import type { Backfills } from '../../backfill/jobs';
import { pointInTime } from '../../core/duration';
import { OperationRejectedError } from '../../core/errors';
import type { EventOperations } from '../../temporal/operations';
import { RECONCILE_PROVIDERS } from '../../temporal/schedules';
import { bodyOf } from './context';

/** Starts backfills as workflows, and names the Stripe sources of WEBHOOKS_CONFIG one may go to. */
export type AdminBackfills = Pick<Backfills, 'start' | 'status' | 'stripeSources'>;

/** `/admin/backfill`: start a backfill as a workflow, and read its status. */
export function backfillRoutes(operations: EventOperations, backfills: AdminBackfills | undefined): express.Router {
  const router = express.Router();
  const available = (): AdminBackfills => {
    if (!backfills) throw new OperationRejectedError('Backfill is not available on this receiver.');
    return backfills;
  };
  router.post('/backfill', async (req, res) => {
    const started = await available().start(backfillInput(bodyOf(req), available().stripeSources));
    res.status(202).json({ ...started, status: 'started', link: operations.uiLink(started.workflowId) });
  });
  router.get('/backfill/:source', async (req, res) => {
    res.json(await available().status(req.params.source));
  });
  return router;
}

/** `POST /admin/backfill`'s body, checked. */
function backfillInput(
  body: Partial<Record<'provider' | 'source' | 'since' | 'until' | 'types' | 'dryRun' | 'redeliver', unknown>>,
  stripeSources: readonly string[],
): BackfillInput {
  if (!(RECONCILE_PROVIDERS as readonly unknown[]).includes(body.provider))
    throw new OperationRejectedError(`"provider" must be ${RECONCILE_PROVIDERS.join(', ')}.`);
  if (body.source !== undefined && (typeof body.source !== 'string' || !stripeSources.includes(body.source)))
    throw new OperationRejectedError('"source" must name a Stripe source of WEBHOOKS_CONFIG.');
  if (typeof body.since !== 'string') throw new OperationRejectedError('"since" is required: a duration (30m, 72h, 7d) or an ISO 8601 time.');
  if (body.until !== undefined && typeof body.until !== 'string') throw new OperationRejectedError('"until" must be a duration or an ISO 8601 time.');
  if (body.types !== undefined && !(Array.isArray(body.types) && body.types.every((type) => typeof type === 'string')))
    throw new OperationRejectedError('"types" must be a list of event types.');
  return {
    provider: body.provider as BackfillInput['provider'],
    ...(typeof body.source === 'string' && { source: body.source }),
    since: pointInTime(body.since, 'since').toISOString(),
    ...(typeof body.until === 'string' && { until: pointInTime(body.until, 'until').toISOString() }),
    ...(body.types !== undefined && { types: body.types as string[] }),
    mode: body.dryRun === true ? 'dry-run' : body.redeliver === true ? 'redeliver' : 'start',
  };
}
