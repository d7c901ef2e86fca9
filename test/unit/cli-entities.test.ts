import type { TurnRequest } from '../../contracts';
import { waitingText } from '../../src/cli/entities';
import type { EntityView } from '../../src/temporal/entities';

const waiting = (eventId: string): TurnRequest => ({ eventId, workflowId: eventId, type: 'orders/updated', version: [1] });
const view = (pending: TurnRequest[], stored: EntityView['stored']) => ({ pending, stored }) as EntityView;

it("says what waits for a key's turn: the run's events by ID, then how many more are kept in the database", () => {
  expect(waitingText(view([], null))).toBe('none');
  expect(waitingText(view([waiting('evt_1'), waiting('evt_2')], null))).toBe('evt_1, evt_2');
  const stored = { count: 1_200, oldest: { eventId: 'evt_3', version: [3] } };
  expect(waitingText(view([waiting('evt_1')], stored))).toBe('evt_1, and 1200 more kept in the database (the oldest: evt_3)');
  expect(waitingText(view([], stored))).toBe('1200 kept in the database (the oldest: evt_3)');
});
