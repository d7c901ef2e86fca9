import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { errorLine } from '../../core/redact';
import { toProblem } from '../problem';
import { entityRoutes } from './entity-routes';
import { eventRoutes } from './event-routes';
import { failureRoutes } from './failure-routes';
import { overviewRoutes } from './overview-routes';
import { ProblemPage } from './pages/sign-in';
import { page } from './render';
import { sessions } from './session';
import type { ConsoleDeps } from './deps';

/**
 * The event console: server-rendered pages (React, escaped by construction), one script and one
 * stylesheet of its own and Chart.js, under a Content-Security-Policy that allows nothing else.
 * Sign-in exchanges an admin or viewer token for a session cookie; every POST carries the session's
 * CSRF token; viewers see everything and may not act or reveal.
 */
export function createConsoleRouter(deps: ConsoleDeps): express.Router {
  const { db, jobs, logger } = deps;
  const router = express.Router();

  router.use(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          objectSrc: ["'none'"],
        },
      },
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  const assets = path.join(__dirname, 'assets');
  router.get('/assets/console.js', (_req, res) => res.sendFile(path.join(assets, 'console.js')));
  router.get('/assets/console.css', (_req, res) => res.sendFile(path.join(assets, 'console.css')));
  router.get('/assets/chart.umd.min.js', (_req, res) => res.sendFile(path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js')));

  // Sign-in, the session every other page needs, its CSRF check, sign-out (./session.tsx).
  router.use(sessions({ db, admins: deps.admins, viewers: deps.viewers, sessionTtlMs: deps.sessionTtlMs, logger }));

  // The overview and the lists (./overview-routes.tsx), one event and its actions (./event-routes.tsx).
  router.use(overviewRoutes(deps));
  router.use(eventRoutes(deps));
  // A keyed flow's key, linked from its events' pages (./entity-routes.tsx).
  router.use(entityRoutes({ db, entities: deps.entities, logger }));
  // Failure groups, their bulk retry, and its job (./failure-routes.tsx).
  router.use(failureRoutes({ db, jobs, logger }));

  router.use((req, res) => {
    page(res.status(404), <ProblemPage title="Not found" detail={`The console has no page at ${req.path}.`} />);
  });

  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const problem = toProblem(error, 'The console could not answer; see the receiver log.');
    if (problem.status >= 500) logger.error({ path: req.path, error: errorLine(error) }, 'console request failed');
    page(res.status(problem.status), <ProblemPage title={problem.title} detail={problem.detail} />);
  });

  return router;
}
