import express from 'express';
import { audit } from '../../db/console-sessions';
import type { Database } from '../../db/database';
import { failureGroups } from '../../db/event-list';
import { OperationRejectedError, ResourceNotFoundError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import { readConfirmation, type BulkJobs } from '../../temporal/bulk-jobs';
import { FailureGroupPage, FailuresPage, JobPage } from './pages/failures';
import { BASE } from './pages/layout';
import { page } from './render';
import { actorOf, requireAdmin, sessionOf } from './session';

/**
 * The console's failure groups: their list, one group's page, its bulk retry (a dry run first, then
 * the confirmation of what it counted), and the job's progress. Behind the console's sessions.
 */
export function failureRoutes({ db, jobs, logger }: { db: Database; jobs: BulkJobs; logger: Logger }): express.Router {
  const router = express.Router();

  router.get('/failures', async (_req, res) => {
    page(res, <FailuresPage session={sessionOf(res)} groups={await failureGroups(db, { limit: 200 })} />);
  });

  router.get('/failures/:fingerprint', async (req, res) => {
    page(res, <FailureGroupPage session={sessionOf(res)} group={await groupOf(req.params.fingerprint)} />);
  });

  router.post('/failures/:fingerprint/retry', requireAdmin, async (req, res) => {
    const group = await groupOf(req.params.fingerprint);
    const session = sessionOf(res);
    if (group.state !== 'failed')
      throw new OperationRejectedError('Only a group of failed events is retried: stuck ones are running, and go on by themselves once the cause is fixed.');
    const confirmed = req.body.yes === 'true' ? readConfirmation(req.body.count, req.body.until) : undefined;
    const reason =
      typeof req.body.reason === 'string' && req.body.reason.trim() !== '' ? (req.body.reason as string) : 'retry of a failure group from the console';
    const answer = await jobs.request(
      { action: 'retry', filter: { group: group.fingerprint }, reason, by: actorOf(session) },
      { dryRun: confirmed === undefined, confirmed },
    );
    if (answer.dryRun) {
      page(res, <FailureGroupPage session={session} group={group} dryRun={answer} />);
      return;
    }
    await audit(db, {
      actor: actorOf(session),
      action: `bulk retry of failure group ${group.fingerprint}`,
      target: answer.jobId,
      detail: { count: answer.count, reason },
    });
    logger.warn({ jobId: answer.jobId, group: group.fingerprint, count: answer.count, by: actorOf(session) }, 'console: bulk retry started');
    res.redirect(303, `${BASE}/jobs/${encodeURIComponent(answer.jobId)}`);
  });

  router.get('/jobs/:jobId', async (req, res) => {
    page(res, <JobPage session={sessionOf(res)} job={await jobs.show(req.params.jobId)} />);
  });

  async function groupOf(fingerprint: string) {
    const [group] = /^[0-9a-f]{16}$/.test(fingerprint) ? await failureGroups(db, { limit: 1, fingerprint }) : [];
    if (!group) throw new ResourceNotFoundError('failure group', fingerprint);
    return group;
  }

  return router;
}
