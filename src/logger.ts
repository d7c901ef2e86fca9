import pino from 'pino';

/**
 * pino, one JSON object per line on stdout, the same field names in every process: `time` (ISO),
 * `level` (`info`, `warn`, `error`), `component`, `message`, and IDs (`eventId`, `workflowId`,
 * `runId`, `activity`, `attempt`), never payloads or secrets.
 */
export type Logger = pino.Logger;

/** The options every logger shares; `npm run dev` on a terminal adds pino-pretty's stream. */
export const LOGGER_OPTIONS: pino.LoggerOptions = {
  messageKey: 'message',
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
};

export function createLogger(component: string, destination?: pino.DestinationStream): Logger {
  return pino({ ...LOGGER_OPTIONS, base: { component } }, destination ?? pino.destination({ sync: true }));
}

/** For tests and embedding: drops everything. */
export const silentLogger: Logger = pino({ enabled: false });
