import express from 'express';
import { listen } from '../../src/dev/http-server';

export interface ReceivedDelivery {
  headers: Record<string, string>;
  body: string;
}

/**
 * A subscriber's webhook endpoint on loopback: records each delivery and answers with the next
 * scripted status (200 once the script runs out).
 */
export async function startEndpointServer(script: number[] = []) {
  const received: ReceivedDelivery[] = [];
  let statuses = [...script];
  const app = express();
  app.post('/hook', express.text({ type: '*/*', limit: '2mb' }), (req, res) => {
    received.push({ headers: req.headers as Record<string, string>, body: String(req.body) });
    res.status(statuses.shift() ?? 200).send('ok');
  });
  const server = await listen(app);
  return {
    url: `${server.url}/hook`,
    received,
    close: server.close,
    answer: (...next: number[]) => {
      statuses = next;
    },
  };
}
