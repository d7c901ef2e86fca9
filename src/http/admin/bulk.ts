import express from 'express';
import { BULK_ACTIONS, type BulkActionName, type BulkInput } from '../../../contracts';
import { OperationRejectedError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import { readConfirmation, type BulkJobs } from '../../temporal/bulk-jobs';
import { parseResetTarget } from '../../temporal/reset-points';
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

/** `POST /admin/bulk`'s body, checked: the action, its filter, reason and arguments. */
function bulkRequest(body: BulkBody): Omit<BulkInput, 'filter' | 'limit' | 'by'> & { filter: EventFilter } {
  if (!(BULK_ACTIONS as readonly unknown[]).includes(body.action)) throw new OperationRejectedError(`"action" must be one of ${BULK_ACTIONS.join(', ')}.`);
  const action = body.action as BulkActionName;
  const filter = (body.filter ?? {}) as Record<string, unknown>;
  if (typeof filter !== 'object' || Array.isArray(filter) || Object.keys(filter).length === 0)
    throw new OperationRejectedError(`"filter" must name what to act on: ${FILTER_FIELDS.join(', ')}.`);
  const unknown = Object.keys(filter).filter((key) => !(FILTER_FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0 || Object.values(filter).some((value) => typeof value !== 'string'))
    throw new OperationRejectedError(`"filter" takes text values of ${FILTER_FIELDS.join(', ')}${unknown.length ? `, not ${unknown.join(', ')}` : ''}.`);
  if (typeof body.reason !== 'string' || body.reason.trim() === '')
    throw new OperationRejectedError('Give a "reason"; it is kept in the job and in each event\'s history.');
  if (action === 'reset') parseResetTarget(body.to ?? 'last-failure');
  const signal = body.signal as { name?: unknown; data?: unknown } | undefined;
  if (action === 'signal' && (typeof signal !== 'object' || signal === null || typeof signal.name !== 'string'))
    throw new OperationRejectedError('A bulk signal needs "signal": {"name": …, "data": …}.');
  return {
    action,
    filter: filter as EventFilter,
    ...(typeof body.to === 'string' && { to: body.to }),
    reason: body.reason,
    ...(action === 'signal' && { signal: { name: signal!.name as string, data: signal!.data } }),
    ...(body.rate !== undefined && { rate: rateOf(body.rate) }),
  };
}
