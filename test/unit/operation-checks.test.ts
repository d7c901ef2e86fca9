import type { Client } from '@temporalio/client';
import { OperationRejectedError } from '../../src/core/errors';
import { BulkJobs } from '../../src/temporal/bulk-jobs';
import { EventOperations } from '../../src/temporal/operations';
import { parseResetTarget } from '../../src/temporal/reset-points';

// The operations check their own input, once, whichever surface asks (the CLI, /admin, the console):
// a blank reason is refused before Temporal or the database is reached (this client reaches neither).
const operations = new EventOperations({} as Client, { uiUrl: 'http://ui' });

it.each([
  [
    'a reset without a reason',
    () => operations.reset('evt_1', parseResetTarget('last-failure'), ' '),
    /Give a reason for the reset; it is kept in the workflow history\./,
  ],
  ['a termination without a reason', () => operations.terminate('evt_1', ''), /Give a reason for the termination/],
  [
    'erase',
    () => operations.erase('evt_1', { by: 'ops', reason: '  ' }),
    /Give a reason for the erasure \(the request it answers\); it is kept in the ledger\./,
  ],
  [
    'an erasure whose "by" is blank',
    () => operations.erase('evt_1', { by: 'ops', requestedBy: ' ', reason: 'request 42' }),
    /"by" must name who asks for the erasure/,
  ],
  ['a retry without a reason', () => operations.apply('retry', 'evt_1', { reason: '', requestId: 'r' }), /Give a reason for the retry/],
])('refuses %s, before reaching Temporal', async (_what, act, message) => {
  const refused = act();
  await expect(refused).rejects.toThrow(OperationRejectedError);
  await expect(refused).rejects.toThrow(message);
});

// A bulk request is checked once, in BulkJobs.request, for the CLI's bulk form, /admin/bulk and the
// console's failure group alike: refused before any event is listed (these operations list none).
const jobs = new BulkJobs({} as Client, { list: () => Promise.reject(new Error('listed')) } as unknown as EventOperations, { taskQueue: 'q' });
const bulk = { action: 'retry' as const, filter: { source: 'stripe' }, reason: 'fixed', by: 'ops' };

it.each([
  ['an action that is none', { ...bulk, action: 'rewind' as never }, /"action" must be one of retry, reset, cancel, terminate, signal\./],
  ['a filter that names nothing', { ...bulk, filter: {} }, /"filter" must name what to act on/],
  ['a filter field that is none', { ...bulk, filter: { colour: 'red' } as never }, /, not colour\./],
  ['a blank reason', { ...bulk, reason: ' ' }, /Give a "reason"; it is kept in the job and in each event's history\./],
  ['a reset point that is none', { ...bulk, action: 'reset' as const, to: 'sideways' }, /"to" must be first, last-task, last-failure or a history event ID/],
  ['a signal without its name', { ...bulk, action: 'signal' as const }, /A bulk signal needs "signal"/],
  ['a rate that is no rate', { ...bulk, rate: 0 }, /"rate" must be a positive number/],
])('refuses a bulk request with %s, before listing any event', async (_what, request, message) => {
  const refused = jobs.request(request);
  await expect(refused).rejects.toThrow(OperationRejectedError);
  await expect(refused).rejects.toThrow(message);
});
