import { createServer } from 'node:net';

/**
 * Where `freePort` draws from: below Linux's ephemeral range (32768 and up), from which every
 * outgoing connection of a busy run takes its local port and could take a probed port before its
 * server binds it; and below 20000, where the production topology's clusters draw theirs.
 */
const FREE_PORTS = { low: 10_000, high: 20_000 };

/** A port nothing listens on now, nor on the ports at each of `offsets` from it (a server's other ports). */
export function freePort(...offsets: number[]): Promise<number> {
  return freePortIn(FREE_PORTS.low, FREE_PORTS.high - Math.max(0, ...offsets), ...offsets);
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
