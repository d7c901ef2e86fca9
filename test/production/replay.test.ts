import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { FLOWS } from '../../src/flows';
import { PREBUILT_BUNDLES, prebuiltWorkflowBundle, workflowSinks } from '../../src/temporal/worker';

/**
 * Recorded histories of every workflow type (test/production/histories, written by
 * `npm run record-histories`) replayed against today's prebuilt bundle, the code production workers
 * load. A change that would break a running workflow (a step added, removed or reordered without
 * `patched()`) fails here with a DeterminismViolationError before it is deployed.
 */
const dir = path.join(__dirname, 'histories');
const files = readdirSync(dir).filter((file) => file.endsWith('.json'));
// Each replays under the workflow ID it ran with: workflows may derive IDs from their own (publishMessage's children).
const histories = files.map((file) => {
  const history = historyFromJSON(JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
  return { workflowId: history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? path.basename(file, '.json'), history };
});

it('has a recorded history for every workflow type the worker runs', () => {
  const types = new Set(histories.map(({ history }) => history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name));
  expect([...types].sort()).toEqual(FLOWS.map((flow) => flow.name).sort());
});

// A worker that traces loads the bundle with the tracing interceptors, one that does not the other; a workflow may move between them.
it.each(PREBUILT_BUNDLES.map(({ file }) => file))('replays every recorded history against the prebuilt workflow bundle %s', async (file) => {
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: prebuiltWorkflowBundle(file), sinks: workflowSinks() }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(histories.length).toBeGreaterThanOrEqual(FLOWS.length);
});
