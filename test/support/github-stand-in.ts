import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import express from 'express';
import { listen } from '../../src/dev/http-server';

/** A delivery as GitHub keeps it for a hook: what it sent, and when. */
interface StoredDelivery {
  id: number;
  guid: string;
  event: string;
  action: string | null;
  deliveredAt: Date;
  redelivery: boolean;
  payload: Record<string, unknown>;
}

/**
 * GitHub's webhook deliveries API, as documented, for the hooks it is given: the list newest first
 * with cursor pagination in `Link` headers, each delivery's request (headers and payload), and
 * redelivery, which posts the delivery again, signed with the hook's secret, to the hook's URL.
 * Answers 401 to any other token. https://docs.github.com/en/rest/repos/webhooks
 */
export async function startGitHubStandIn(options: { token: string }) {
  const hooks = new Map<string, { deliveries: StoredDelivery[]; target?: { url: string; secret: string } }>();
  const requests: Array<{ method: string; path: string }> = [];
  let linkHost: string | undefined;
  let failures: number[] = [];
  let nextId = 1;
  const hookOf = (hook: string) => {
    let found = hooks.get(hook);
    if (!found) hooks.set(hook, (found = { deliveries: [] }));
    return found;
  };

  const app = express();
  app.use((req, res, next) => {
    requests.push({ method: req.method, path: req.path });
    const status = failures.shift();
    if (status !== undefined) {
      res.status(status).json({ message: 'Injected failure from the stand-in.' });
      return;
    }
    if (req.header('authorization') !== `token ${options.token}` && req.header('authorization') !== `Bearer ${options.token}`) {
      res.status(401).json({ message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
      return;
    }
    next();
  });

  app.use((req, res, next) => {
    const match = /^\/(.+\/hooks\/\d+)\/deliveries(?:\/(\d+)(\/attempts)?)?$/.exec(req.path);
    const hook = match && hooks.get(match[1]!);
    if (!match || !hook) return next();
    const newestFirst = [...hook.deliveries].sort((a, b) => b.deliveredAt.getTime() - a.deliveredAt.getTime() || b.id - a.id);
    if (!match[2] && req.method === 'GET') {
      const perPage = Math.min(Number(req.query.per_page ?? 30), 100);
      const cursor = Number(req.query.cursor ?? 0);
      const page = newestFirst.slice(cursor, cursor + perPage);
      if (cursor + perPage < newestFirst.length) {
        const next = new URL(`${req.protocol}://${linkHost ?? req.get('host')}${req.path}`);
        next.searchParams.set('per_page', String(perPage));
        next.searchParams.set('cursor', String(cursor + perPage));
        res.set('Link', `<${next}>; rel="next"`);
      }
      res.json(page.map(summary));
      return;
    }
    const delivery = hook.deliveries.find((candidate) => candidate.id === Number(match[2]));
    if (!delivery) return next();
    if (!match[3] && req.method === 'GET') {
      res.json({
        ...summary(delivery),
        request: {
          headers: { 'X-GitHub-Delivery': delivery.guid, 'X-GitHub-Event': delivery.event, 'Content-Type': 'application/json' },
          payload: delivery.payload,
        },
        response: { headers: {}, payload: null },
      });
      return;
    }
    if (match[3] && req.method === 'POST') {
      res.status(202).json({});
      if (hook.target) void redeliver(hook.target, hook.deliveries, delivery);
      return;
    }
    next();
  });
  app.use((_req, res) => {
    res.status(404).json({ message: 'Not Found' });
  });

  async function redeliver(target: { url: string; secret: string }, deliveries: StoredDelivery[], original: StoredDelivery) {
    const body = JSON.stringify(original.payload);
    deliveries.push({ ...original, id: nextId++, deliveredAt: new Date(), redelivery: true });
    await fetch(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-delivery': original.guid,
        'x-github-event': original.event,
        'x-hub-signature-256': await sign(target.secret, body),
      },
      body,
    });
  }

  const server = await listen(app);
  return {
    url: server.url,
    close: server.close,
    requests,
    /** Where a hook's redeliveries go, signed with its secret. */
    setTarget: (hook: string, target: { url: string; secret: string }) => void (hookOf(hook).target = target),
    /** Records a delivery GitHub made (or tried to make) for the hook; returns its GUID. */
    addDelivery: (hook: string, delivery: { event: string; payload: Record<string, unknown>; deliveredAt?: Date; guid?: string }) => {
      const guid = delivery.guid ?? randomUUID();
      const action = typeof delivery.payload.action === 'string' ? delivery.payload.action : null;
      hookOf(hook).deliveries.push({
        id: nextId++,
        guid,
        event: delivery.event,
        action,
        deliveredAt: delivery.deliveredAt ?? new Date(),
        redelivery: false,
        payload: delivery.payload,
      });
      return guid;
    },
    /** Pagination links name this host instead of the one asked (a hostile or misconfigured API). */
    setLinkHost: (host: string | undefined) => void (linkHost = host),
    /** The next requests fail with these statuses. */
    failNext: (...statuses: number[]) => {
      failures = [...failures, ...statuses];
    },
  };
}

function summary(delivery: StoredDelivery) {
  return {
    id: delivery.id,
    guid: delivery.guid,
    delivered_at: delivery.deliveredAt.toISOString(),
    redelivery: delivery.redelivery,
    duration: 0.1,
    status: 'OK',
    status_code: 200,
    event: delivery.event,
    action: delivery.action,
    installation_id: null,
    repository_id: 1,
  };
}
