import { createServer } from 'node:net';

/** A port nothing listens on now, nor on the ports at each of `offsets` from it (a server's other ports). */
export async function freePort(...offsets: number[]): Promise<number> {
  for (;;) {
    const port = await listenOnce(0);
    const others = offsets.map((offset) => port + offset);
    if (others.some((other) => other < 1024 || other > 65535)) continue;
    const free = await Promise.all(
      others.map((other) =>
        listenOnce(other).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (free.every(Boolean)) return port;
  }
}

/** A free port in [low, high) whose ports at `offsets` are free too, for servers that cannot use the ephemeral range. */
export async function freePortIn(low: number, high: number, ...offsets: number[]): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    const free = await Promise.all(
      [0, ...offsets].map((offset) =>
        listenOnce(port + offset).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (free.every(Boolean)) return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
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
