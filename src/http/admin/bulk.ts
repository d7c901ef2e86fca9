import express from 'express';
import type { BulkActionName, BulkInput } from '../../../contracts';
import { OperationRejectedError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import { readConfirmation, type BulkJobs } from '../../temporal/bulk-jobs';
import { FILTER_FIELDS, type EventFilter } from '../../temporal/visibility';
import { actor, bodyOf, rateOf } from './context';

type BulkBody = Partial<Record<'action' | 'filter' | 'to' | 'reason' | 'signal' | 'rate' | 'dryRun' | 'yes' | 'confirm', unknown>>;

/** `/admin/bulk`: bulk actions by filter, as durable jobs (src/temporal/bulk-jobs.ts): request (a dry run first), list, show, stop. */
export function bulkRoutes(jobs: BulkJobs | undefined, logger: Logger): express.Router {
  const router = express.Router();
  const available = (): BulkJobs => {
    if (!jobs) throw new OperationRejectedError('Bulk jobs are not available on this receiver.');
    return jobs;
  };
  router.post('/bulk', async (req, res) => {
    const body = bodyOf<keyof BulkBody>(req);
    const confirm = body.confirm as { count?: unknown; until?: unknown } | null | undefined;
    const answer = await available().request(
      { ...bulkRequest(body), by: actor(res) },
      { dryRun: body.dryRun === true, yes: body.yes === true, confirmed: confirm === undefined ? undefined : readConfirmation(confirm?.count, confirm?.until) },
    );
    if (!answer.dryRun) logger.warn({ jobId: answer.jobId, action: body.action, count: answer.count, by: actor(res) }, 'bulk job started');
    res.status(answer.dryRun ? 200 : 202).json(answer);
  });
  router.get('/bulk', async (_req, res) => {
    res.json({ jobs: await available().list() });
  });
  router.get('/bulk/:jobId', async (req, res) => {
    res.json(await available().show(req.params.jobId));
  });
  router.delete('/bulk/:jobId', async (req, res) => {
    await available().stop(req.params.jobId);
    logger.warn({ jobId: req.params.jobId, by: actor(res) }, 'bulk job stop requested');
    res.status(202).json({ jobId: req.params.jobId, status: 'stop requested' });
  });
  return router;
}

/** `POST /admin/bulk`'s body as the request it asks for; `BulkJobs.request` checks it, as it does the CLI's and the console's. */
function bulkRequest(body: BulkBody): Omit<BulkInput, 'filter' | 'limit' | 'by'> & { filter: EventFilter } {
  const signal = body.signal as { name?: unknown; data?: unknown } | undefined;
  const filter = body.filter ?? {};
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter))
    throw new OperationRejectedError(`"filter" must be an object of ${FILTER_FIELDS.join(', ')}.`);
  return {
    action: body.action as BulkActionName,
    filter: filter as EventFilter,
    ...(body.to !== undefined && { to: body.to as string }),
    reason: body.reason as string,
    ...(typeof signal === 'object' && signal !== null && { signal: { name: signal.name as string, data: signal.data } }),
    ...(body.rate !== undefined && { rate: rateOf(body.rate) }),
  };
}
