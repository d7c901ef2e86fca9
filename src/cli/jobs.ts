import { Command } from 'commander';
import { describeJob, watchJob } from './bulk';
import { createOperations } from './operations';
import { jsonOption, print } from './output';

/** `durable-webhooks jobs …`: the bulk jobs `events retry|reset|cancel|terminate|signal` start with a filter. */
export function jobsCommand(): Command {
  const jobs = new Command('jobs').description('Bulk jobs (events retry|reset|cancel|terminate|signal with a filter): list them, watch one, stop one.');
  jobs
    .command('list')
    .description('The latest bulk jobs, newest first.')
    .addOption(jsonOption('print the jobs as JSON'))
    .action(async (options: { json?: boolean }) => {
      const found = await (await createOperations()).jobs.list();
      print(options.json, { jobs: found }, () =>
        found.length === 0 ? 'No bulk jobs.' : found.map((job) => `${job.jobId}  ${job.status}  started ${job.startTime}`).join('\n'),
      );
    });
  jobs
    .command('show')
    .argument('<jobId>')
    .description("A job's progress: matched, done, skipped by reason, failed (one line each); with --watch, until it ends.")
    .option('--watch', 'follow it to its end, with a progress bar on a terminal')
    .addOption(jsonOption('print the progress as JSON'))
    .action(async (jobId: string, options: { watch?: boolean; json?: boolean }) => {
      const { jobs: bulk } = await createOperations();
      const view = options.watch ? await watchJob(bulk, jobId, !options.json && process.stderr.isTTY) : await bulk.show(jobId);
      print(options.json, view, () => describeJob(view));
    });
  jobs
    .command('stop')
    .argument('<jobId>')
    .description('Stop a job: it finishes the batch under way (every action taken is counted) and ends stopped.')
    .addOption(jsonOption())
    .action(async (jobId: string, options: { json?: boolean }) => {
      await (await createOperations()).jobs.stop(jobId);
      print(
        options.json,
        { jobId, status: 'stop requested' },
        () => `Stop requested for ${jobId}; durable-webhooks jobs show '${jobId}' reports where it stopped.`,
      );
    });
  return jobs;
}
