/** A JSON-lines logger on stdout/stderr; fields carry IDs, never payloads or secrets. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(component: string): Logger {
  const write = (level: string, stream: NodeJS.WriteStream) => (message: string, fields?: Record<string, unknown>) => {
    stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, component, message, ...fields })}\n`);
  };
  return { info: write('info', process.stdout), warn: write('warn', process.stderr), error: write('error', process.stderr) };
}

/** For tests and embedding: drops everything. */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
