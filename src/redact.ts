/** Anything shaped like an email address: `alice@example.com`, inside `<…>` or quotes too. */
const ADDRESS = /[^\s<>"'(),;:@[\]]+@[^\s<>"'(),;:@[\]]+/g;

/** The text with every email address replaced by `<address>`. */
export function withoutAddresses(text: string): string {
  return text.replace(ADDRESS, '<address>');
}

/**
 * What an error may carry into a log line: its name, code and message with addresses removed. Never
 * the whole object: a mail library's error holds the reply, the envelope and the rejected recipients.
 */
export function describeError(error: unknown): { type: string; code?: string; message: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: withoutAddresses(String(error)) };
  const code = (error as { code?: unknown }).code;
  return { type: error.name, ...(typeof code === 'string' && { code }), message: withoutAddresses(error.message) };
}

/** An error as one line for a log field or a stored reason (`TypeError: …`), addresses removed. */
export function errorLine(error: unknown): string {
  const { type, message } = describeError(error);
  return error instanceof Error ? `${type}: ${message}` : message;
}

/**
 * pino's `redact` paths for fields that can hold an address, wherever a line puts an error or a
 * message: removed from the line, not masked.
 */
export const REDACTED_LOG_FIELDS = ['to', 'email', 'customerEmail', ...['error', 'err'].flatMap((key) => ['response', 'rejected', 'rejectedErrors', 'envelope', 'stack'].map((field) => `${key}.${field}`))];
