import type { Logger } from './logger';

/** How many ports past a busy one a metrics server tries before it runs without metrics. */
export const METRICS_PORT_TRIES = 10;

/**
 * Listens on `address`, or on the next free port after it when another process holds it (several
 * receivers or workers on one host), logging the port taken; with none free in `METRICS_PORT_TRIES`,
 * warns once and resolves undefined: a busy metrics port never stops a process.
 */
export async function listenForMetrics(address: string, logger: Logger, listen: (host: string, port: number) => Promise<void>): Promise<string | undefined> {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const wanted = Number(address.slice(colon + 1));
  for (let port = wanted; port <= (wanted === 0 ? 0 : wanted + METRICS_PORT_TRIES); port++) {
    try {
      await listen(host, port);
      if (port !== wanted)
        logger.warn({ wanted: address, metrics: `${address.slice(0, colon)}:${port}` }, `metrics port ${wanted} is busy; serving metrics on ${port}`);
      return `${address.slice(0, colon)}:${port}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
  logger.warn({ wanted: address }, `metrics ports ${wanted}-${wanted + METRICS_PORT_TRIES} are busy; running without metrics`);
  return undefined;
}
