import { defineFlow } from '../contracts';
import { dbActivity } from './activities';

export const buildCheckFlow = defineFlow({
  workflow: buildCheck,
  description: '`workers promote` runs it pinned to the build it is about to make current: only a build that completes it is promoted.',
  internal: true,
  versioning: { behavior: 'PINNED', why: 'It checks one build, so it runs on that build or not at all.' },
});

/**
 * A build's proof of life: its workflow code loads and completes a workflow task, and its worker
 * runs a (local) activity. Nothing else: no side effect, no input.
 */
export async function buildCheck(): Promise<'ok'> {
  await dbActivity.flowSettings();
  return 'ok';
}
