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
export const REDACTED_LOG_FIELDS = [
  'to',
  'email',
  'customerEmail',
  ...['error', 'err'].flatMap((key) => ['response', 'rejected', 'rejectedErrors', 'envelope', 'stack'].map((field) => `${key}.${field}`)),
];

/** Keys whose values name or reach a person: masked in the console until an audited reveal. */
const PERSONAL_KEY = /e-?mail|name|phone|address|line[12]|postal|zip|city|birth|ip_?address|(^|_)ip$|remote_?addr|tax_?id|ssn|card_?holder|login/i;
/** A client's address under a camel-cased key (`shopperIP`, `clientIp`), which the rule above cannot tell from `zip`. */
const IP_KEY = /[a-z](?:Ip|IP)$/;
/** An IPv4 address anywhere in a string. */
const IPV4 = /\b(?:\d{1,3}\.){3}\d{1,3}\b/g;
/** A host and port (`temporal:7233`, `10.0.0.5:5432`, `[fd00::1]:7233`) anywhere in a string, not a time of day (`T01:25:27`). */
const HOST_PORT = /\[[0-9a-f:]+\](?::\d{1,5})?|(?<![\w:.-])[a-z0-9][a-z0-9.-]*:\d{2,5}(?![\w:])/gi;

/** Text that leaves the cluster (an alert) without the hosts, ports and IPv4 addresses it names inside it. */
export function withoutInternalAddresses(text: string): string {
  return text.replace(HOST_PORT, '<address>').replace(IPV4, '<address>');
}

/** The mask shown in place of a personal value. */
export const MASK = '••••';

/**
 * A parsed body with personal values masked: every value under a key that names a person
 * (email, name, phone, address, a client's IP address…), however deep, and every email and IPv4
 * address anywhere else. Shape and other values stay.
 */
export function maskPersonal(value: unknown, key = '', insidePersonal = false): unknown {
  const personal = insidePersonal || PERSONAL_KEY.test(key) || IP_KEY.test(key);
  if (Array.isArray(value)) return value.map((item) => maskPersonal(item, key, personal));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskPersonal(item, name, personal)]));
  if (personal && value !== null && typeof value !== 'boolean') return MASK;
  return typeof value === 'string' ? value.replace(ADDRESS, MASK).replace(IPV4, MASK) : value;
}
