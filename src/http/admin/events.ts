import express from 'express';
import { EVENT_ACTIONS, eventActionNamed, readActionInput, type EventAction } from '../../operator/event-actions';
import type { EventOperations } from '../../temporal/operations';
import { actor, bodyOf, filterOf } from './context';

/**
 * `/admin/events`: list, show and verify events by event ID, and every event action
 * (src/operator/event-actions.ts) as `POST /admin/events/:eventId/<action>` with its fields as JSON.
 */
export function eventRoutes(operations: EventOperations): express.Router {
  const router = express.Router();
  router.get('/events', async (req, res) => {
    res.json({ events: await operations.list(filterOf(req)) });
  });
  router.get('/events/:eventId', async (req, res) => {
    res.json(await operations.show(req.params.eventId));
  });
  router.get('/events/:eventId/verify', async (req, res) => {
    res.json(await operations.verify(req.params.eventId));
  });
  const signal = eventActionNamed('signal')!;
  // A signal by its name in the path, its argument the whole body.
  router.post(
    '/events/:eventId/signals/:name',
    act(operations, signal, (req) => ({ signal: req.params.name, data: req.body as unknown })),
  );
  for (const action of EVENT_ACTIONS)
    router.post(
      `/events/:eventId/${action.name}`,
      act(operations, action, (req) => bodyOf(req)),
    );
  return router;
}

/** An action's route: its input checked once (`readActionInput`), done as the token's name. */
function act(operations: EventOperations, action: EventAction, given: (req: express.Request) => Record<string, unknown>): express.RequestHandler {
  return async (req, res) => {
    const eventId = req.params.eventId as string;
    const answer = await action.run(operations, eventId, readActionInput(action, given(req)), actor(res));
    res.status(action.accepted ? 202 : 200).json(answer);
  };
}
