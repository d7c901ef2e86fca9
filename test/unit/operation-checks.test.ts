import type { Client } from '@temporalio/client';
import { OperationRejectedError } from '../../src/core/errors';
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
