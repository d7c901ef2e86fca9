import { createServer } from 'node:net';

/** A port nothing listens on now (and, with `plus`, the port that far above it too). */
export async function freePort(plus?: number): Promise<number> {
  for (;;) {
    const port = await listenOnce(0);
    if (plus === undefined || (await listenOnce(port + plus).then(() => true, () => false))) return port;
  }
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
