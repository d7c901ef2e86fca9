/**
 * The failure modes, one class each: here, and a delivery's in ./delivery-errors.ts. They carry
 * identifiers, never payloads, secrets or signature headers, so a logger can print them safely. Each
 * one that reaches HTTP is declared with `problem(…)` (or extends `ProblemError`, where its slug
 * depends on the instance): one declaration states its status, slug, title, context and message,
 * and `src/http/problem.ts` turns any of them into a problem document.
 */

/** An error an HTTP route answers with a problem document (RFC 9457): its status, type slug and title. */
export abstract class ProblemError extends Error {
  abstract readonly status: number;
  /** The last part of the problem `type` URI. */
  abstract readonly slug: string;
  abstract readonly title: string;
  constructor(message?: string, options?: { cause?: unknown }) {
    super(message, options);
    // The class's own name, as the logs and the CLI print it: `SignatureVerificationError: …`.
    this.name = new.target.name;
  }
  /** Extra members of the problem document: identifiers only. */
  get extensions(): Record<string, unknown> {
    return {};
  }
}

type Cause = { cause?: unknown };
/**
 * What an error's problem document carries of its context, identifiers only: some of its members,
 * or what a function makes of it (a count, a bounded list, a constant).
 */
type Shown<Context> = readonly (keyof Context & string)[] | ((context: Context) => Record<string, unknown>);
/** A declared problem: a `ProblemError` whose status, slug and title are set, with its context's members. */
type Declared<Context> = Error & Pick<ProblemError, 'status' | 'slug' | 'title' | 'extensions'> & Readonly<Context>;
/** A problem whose message is given where it is thrown: `new X('message', context?)`. */
type Given<Context> = new (message: string, context?: Context, options?: Cause) => Declared<Context>;
/** A problem whose message its declaration makes from its context: `new X(context)`. */
type Described<Context> = new (context: Context, options?: Cause) => Declared<Context>;

/**
 * The base of a problem, declared in one line: its status, type slug and title; what its problem
 * document carries of its context (set on the error): some members, or what a function makes of them;
 * and, unless the message is given where it is thrown, how its message reads from the context.
 *
 *     class HoldNotFoundError extends problem(404, 'hold-not-found', 'No such hold') {}            // new HoldNotFoundError('…')
 *     class X extends problem<{ source: string }>(400, 'x', 'X', ['source']) {}                     // new X('…', { source })
 *     class Y extends problem(403, 'y', 'Y', ['source'], ({ source }: { source: string }) => `…`) {} // new Y({ source })
 */
export function problem<Context extends object = object>(status: number, slug: string, title: string, shown?: Shown<Context>): Given<Context>;
export function problem<Context extends object>(
  status: number,
  slug: string,
  title: string,
  shown: Shown<Context>,
  describe: (context: Context) => string,
  base?: abstract new (message: string, options?: Cause) => ProblemError,
): Described<Context>;
export function problem<Context extends object>(
  status: number,
  slug: string,
  title: string,
  shown: Shown<Context> = [],
  describe?: (context: Context) => string,
  base: abstract new (message: string, options?: Cause) => ProblemError = ProblemError,
) {
  class Problem extends base {
    readonly status = status;
    readonly slug = slug;
    readonly title = title;
    readonly #extensions: Record<string, unknown>;
    constructor(...args: [string, Context?, Cause?] | [Context, Cause?]) {
      const [message, context, options] = describe
        ? [describe(args[0] as Context), args[0] as Context, args[1] as Cause | undefined]
        : [args[0] as string, (args[1] ?? {}) as Context, args[2] as Cause | undefined];
      super(message, options);
      Object.assign(this, context);
      this.#extensions = typeof shown === 'function' ? shown(context) : Object.fromEntries(shown.map((key) => [key, context[key]]));
    }
    override get extensions(): Record<string, unknown> {
      return this.#extensions;
    }
  }
  return Problem;
}

/** The configuration read at start-up is invalid; the process must not start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** No active hold matches what a release names. */
export class HoldNotFoundError extends problem(404, 'hold-not-found', 'No such hold') {}

/** No workflow has this event ID in the namespace. Exit 1 in the CLI. */
export class EventNotFoundError extends problem(
  404,
  'event-not-found',
  'Event not found',
  ['eventId'],
  ({ eventId, why = 'no workflow has that ID in this namespace' }: { eventId: string; why?: string }) => `No event ${eventId}: ${why}.`,
) {}

/** An operator request that cannot be carried out as asked; nothing was changed. Exit 1 in the CLI. */
export class OperationRejectedError extends problem(400, 'operation-rejected', 'Operation rejected') {}

/** The operation needs the event's workflow to be closed; nothing was changed. */
export class EventRunningError extends problem(409, 'event-running', 'Event still running') {}

/** A backfill of this source is running; nothing was started. */
export class BackfillRunningError extends problem(409, 'backfill-running', 'Backfill running') {}

/** The message's deliveries still run, and would need its payload; nothing was changed. */
export class MessageDeliveringError extends problem(409, 'message-delivering', 'Message still delivering') {}

/** A signal the workflow takes only while it waits for it, sent when it does not; nothing was sent. */
export class SignalNotAwaitedError extends problem(409, 'signal-not-awaited', 'Signal not awaited') {}

/** `/admin` without the right bearer token. */
export class AdminAuthError extends problem(401, 'unauthorized', 'Unauthorized') {}

/** A console request its session may not make: a viewer acting, a form without its CSRF token, a request from another site. */
export class ConsoleForbiddenError extends problem(403, 'forbidden', 'Forbidden') {}

/** Too many refused bearer tokens from one address; nothing was checked. */
export class TooManyFailedAttemptsError extends problem(
  429,
  'too-many-failed-attempts',
  'Too many failed attempts',
  [],
  ({ limit }: { limit: number }) => `More than ${limit} refused tokens from this address within a minute; wait, then send the right one.`,
) {}

/** `/v1` without a valid API token. */
export class ApiAuthError extends problem(401, 'unauthorized', 'Unauthorized') {}

/** A request to our API that is not valid as sent (missing Idempotency-Key, bad fields). */
export class InvalidRequestError extends problem(400, 'invalid-request', 'Invalid request') {}

/** The Idempotency-Key was first used with another request body. */
export class IdempotencyKeyReusedError extends problem(
  422,
  'idempotency-key-reused',
  'Idempotency-Key reused',
  [],
  ({ idempotencyKey }: { idempotencyKey: string }) =>
    `The Idempotency-Key "${idempotencyKey}" was already used with a different request body; use a new key for a new message.`,
) {}

/** The first request with this Idempotency-Key is still being recorded, or failed before it was: retry. */
export class IdempotencyConflictError extends problem(
  409,
  'idempotency-key-in-use',
  'Request in progress',
  [],
  ({ idempotencyKey, firstFailed }: { idempotencyKey: string; firstFailed: boolean }) =>
    firstFailed
      ? `The first request with the Idempotency-Key "${idempotencyKey}" failed before it was recorded; retry this one.`
      : `A request with the Idempotency-Key "${idempotencyKey}" is still being processed; retry shortly.`,
) {}

/** A message that could not be delivered as asked, refused before anything is recorded. */
export class UndeliverableMessageError extends problem(422, 'undeliverable-message', 'Message cannot be delivered') {}

/** A provider's API (Stripe's events, GitHub's deliveries) refused or failed a backfill's call. */
export class ProviderApiError extends problem(502, 'provider-api-error', "The provider's API failed") {}

/** No such endpoint or message for this API token. */
export class ResourceNotFoundError extends ProblemError {
  readonly status = 404;
  readonly title = 'Not found';
  constructor(
    readonly kind: 'endpoint' | 'message' | 'backfill' | 'job' | 'failure group' | 'console action',
    readonly id: string,
  ) {
    super(`No ${kind} ${id}.`);
  }
  get slug() {
    return `${this.kind.replace(/ /g, '-')}-not-found`;
  }
}

/**
 * An error's message and its causes' after it (`Failed to describe workflow: 14 UNAVAILABLE: … handshake
 * failed`), each once, on one line: the reason a process stops, where the first message alone
 * would hide it (a refused TLS certificate, an unreachable server).
 */
export function messageWithCauses(error: unknown): string {
  const messages: string[] = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const message = (current instanceof Error ? current.message : String(current)).replace(/\s+/g, ' ').trim();
    if (message && !messages.some((seen) => seen.includes(message))) messages.push(message);
  }
  return messages.join(': ');
}

/** An endpoint URL we refuse to call: not http(s), or resolving to a private or special address. */
export class UnsafeDestinationError extends InvalidRequestError {}

/** A failure the email provider says will not succeed on retry (a bad address, a rejected key). */
export class PermanentEmailError extends Error {
  override readonly name = 'PermanentEmailError';
}

/**
 * PostgreSQL answers at the URL but refuses its user (no such role, a wrong password, no
 * `pg_hba.conf` entry): starting another one on that port would fail, so the message says which user to give.
 */
export class PostgresRefusedError extends ConfigError {
  constructor(dbUrl: string, reason: string) {
    const url = new URL(dbUrl);
    super(
      `PostgreSQL at ${url.hostname}:${url.port || 5432} refused user "${decodeURIComponent(url.username)}" (TEMPORAL_DB_URL): ${reason}. ` +
        'Set TEMPORAL_DB_URL to a user of it that may create databases, or create that user.',
    );
  }
}

/** PostgreSQL does not answer at the URL; the message says what to start. */
export class PostgresUnreachableError extends ConfigError {
  constructor(dbUrl: string, reason: string) {
    const url = new URL(dbUrl);
    const where = `${url.hostname}:${url.port || 5432}`;
    super(
      `PostgreSQL does not answer at ${where} (TEMPORAL_DB_URL): ${reason}. Start one whose user "${decodeURIComponent(url.username)}" may create databases, ` +
        `for example \`docker run -d -p 127.0.0.1:5432:5432 -e POSTGRES_USER=temporal -e POSTGRES_PASSWORD=temporal postgres:16\`, or set TEMPORAL_DB_URL to yours.`,
    );
  }
}
