import net from 'node:net';

/**
 * A TCP proxy to `target` that can be frozen: while frozen it holds every connection open and
 * forwards nothing either way, as a network partition does, so a request sent through it neither
 * arrives nor fails. Held, it forwards what is open and holds each new connection until released.
 */
export interface TcpProxy {
  address: string;
  freeze(): void;
  /** New connections wait, unforwarded, until `release()`; resolves when the first arrives. */
  hold(): Promise<void>;
  /** Forwards the connections held, and every new one again. */
  release(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  let frozen = false;
  let held: Array<() => void> | undefined;
  let onHeld: (() => void) | undefined;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    // A socket nobody reads holds what it receives.
    if (frozen) return;
    const forward = () => {
      client.pipe(upstream);
      upstream.pipe(client);
    };
    if (!held) return forward();
    held.push(forward);
    onHeld?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze() {
      frozen = true;
      for (const socket of sockets) {
        socket.unpipe();
        socket.pause();
      }
    },
    hold() {
      held = [];
      return new Promise((resolve) => {
        onHeld = resolve;
      });
    },
    release() {
      const forwards = held ?? [];
      held = undefined;
      for (const forward of forwards) forward();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
