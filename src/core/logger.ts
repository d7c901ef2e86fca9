import pino from 'pino';
import pretty from 'pino-pretty';
import { REDACTED_LOG_FIELDS } from './redact';

/**
 * pino, one JSON object per line, the same field names in every process: `time` (ISO), `level`
 * (`info`, `warn`, `error`), `component`, `message`, and IDs (`eventId`, `workflowId`, `runId`,
 * `activity`, `attempt`), never payloads or secrets. Fields that can hold an email address are
 * removed (`REDACTED_LOG_FIELDS`), whatever a caller passes.
 */
export type Logger = pino.Logger;

export interface LoggerOptions {
  /** Where lines go: stdout for the services, stderr for the CLI's diagnostics. @default 'stdout' */
  to?: 'stdout' | 'stderr';
  /** Readable lines for a person at a terminal (pino-pretty) instead of JSON: `npm run dev` and the CLI on a TTY. */
  pretty?: boolean;
}

export function createLogger(component: string, { to = 'stdout', pretty: readable = false }: LoggerOptions = {}): Logger {
  const fd = to === 'stdout' ? 1 : 2;
  const destination = readable
    ? pretty({ destination: fd, sync: true, messageKey: 'message', translateTime: 'SYS:HH:MM:ss' })
    : pino.destination({ fd, sync: true });
  return pino(
    {
      base: { component },
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_LOG_FIELDS, remove: true },
    },
    destination,
  );
}

/** For tests and embedding: drops everything. */
export const silentLogger: Logger = pino({ enabled: false });
