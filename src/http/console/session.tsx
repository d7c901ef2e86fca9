import cookieParser from 'cookie-parser';
import express, { type NextFunction, type Request, type Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { NamedToken } from '../../config';
import { audit, createSession, deleteSession, findSession, hashOf, type ConsoleRole, type ConsoleSession, type SessionToken } from '../../db/console-sessions';
import type { Queryable } from '../../db/database';
import { AdminAuthError, ConsoleForbiddenError, TooManyFailedAttemptsError } from '../../core/errors';
import type { Logger } from '../../core/logger';
import { safeEqual } from '../../providers/secrets';
import { BASE } from './pages/layout';
import { SignInPage } from './pages/sign-in';
import { page } from './render';

/** The session cookie: HttpOnly, SameSite=Strict, on the console's path only; Secure when the request came over HTTPS. */
const COOKIE = 'dw_console';

/** Failed sign-ins one client address may make a minute. */
const MAX_FAILED_SIGN_INS_PER_MINUTE = 10;

/**
 * The console's doors: sign-in exchanges an admin or viewer token (compared in constant time, 10
 * failures a minute per address, a right token never refused for them) for a session cookie; every
 * later request needs the session, whose token must still be configured with its role, and a POST
 * its CSRF token and no cross-site origin; sign-out ends the session. What `sessionOf` reads.
 */
export function sessions(deps: {
  db: Queryable;
  admins: readonly NamedToken[];
  viewers: readonly NamedToken[];
  sessionTtlMs: number;
  logger: Logger;
}): express.Router {
  const { db, logger } = deps;
  const current = sessionTokens(deps.admins, deps.viewers);
  const router = express.Router();
  router.use(cookieParser(), express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));

  router.get('/login', (_req, res) => page(res, <SignInPage />));

  router.post(
    '/login',
    rateLimit({
      windowMs: 60_000,
      limit: MAX_FAILED_SIGN_INS_PER_MINUTE,
      // Only failures count, and a right token is never refused: a guesser behind the same address
      // (everyone behind an ingress, without TRUST_PROXY) cannot lock the operators out.
      skip: (req) => signInOf(tokenIn(req), deps.admins, deps.viewers) !== undefined,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      handler: (_req, res) => page(res.status(429), <SignInPage error={new TooManyFailedAttemptsError({ limit: MAX_FAILED_SIGN_INS_PER_MINUTE }).message} />),
    }),
    sameSite,
    async (req, res) => {
      const token = tokenIn(req);
      const signIn = signInOf(token, deps.admins, deps.viewers);
      if (!signIn) {
        logger.warn({ client: req.ip }, 'console sign-in refused');
        page(res.status(401), <SignInPage error="That is not an admin or viewer token of this receiver." />);
        return;
      }
      const session = await createSession(db, { ...signIn, tokenSha256: hashOf(token), ttlMs: deps.sessionTtlMs });
      await audit(db, { actor: actorOf(session), action: 'sign-in' });
      res.cookie(COOKIE, session.id, { httpOnly: true, sameSite: 'strict', secure: req.secure, path: BASE, maxAge: deps.sessionTtlMs });
      res.redirect(303, BASE);
    },
  );

  // Everything below needs a session; a POST needs its CSRF token too.
  router.use(async (req, res, next) => {
    const id = typeof req.cookies?.[COOKIE] === 'string' ? (req.cookies[COOKIE] as string) : undefined;
    const found = id ? await findSession(db, id) : undefined;
    // A session of a token removed or moved to another role ends with it.
    const session = found && current.some((token) => token.tokenSha256 === found.tokenSha256 && token.role === found.role) ? found : undefined;
    if (found && !session) await deleteSession(db, id!);
    if (!session) {
      if (req.method === 'GET') return res.redirect(303, `${BASE}/login`);
      throw new AdminAuthError('Sign in to the console first.');
    }
    res.locals.session = session;
    res.locals.sessionId = id;
    if (req.method === 'POST') {
      sameSite(req, res, () => undefined);
      const csrf = typeof req.body?._csrf === 'string' ? (req.body._csrf as string) : '';
      if (!safeEqual(csrf, session.csrf))
        throw new ConsoleForbiddenError('The form is missing its CSRF token, or it is from another session; reload the page and try again.');
    }
    next();
  });

  router.post('/logout', async (_req, res) => {
    await deleteSession(db, res.locals.sessionId as string);
    res.clearCookie(COOKIE, { path: BASE });
    res.redirect(303, `${BASE}/login`);
  });

  return router;
}

const tokenIn = (req: Request) => (typeof req.body?.token === 'string' ? (req.body.token as string) : '');

/** The tokens a session may be bound to now: each admin and viewer token's hash, with its role. */
export function sessionTokens(admins: readonly NamedToken[], viewers: readonly NamedToken[]): SessionToken[] {
  return [
    ...admins.map(({ token }) => ({ tokenSha256: hashOf(token), role: 'admin' as const })),
    ...viewers.map(({ token }) => ({ tokenSha256: hashOf(token), role: 'viewer' as const })),
  ];
}

/** The token's role, compared in constant time against every admin and viewer token. */
function signInOf(token: string, admins: readonly NamedToken[], viewers: readonly NamedToken[]): { tokenName: string; role: ConsoleRole } | undefined {
  const admin = admins.find((each) => safeEqual(token, each.token));
  if (admin) return { tokenName: admin.name, role: 'admin' };
  const viewer = viewers.find((each) => safeEqual(token, each.token));
  return viewer && { tokenName: viewer.name, role: 'viewer' };
}

export const sessionOf = (res: Response) => res.locals.session as ConsoleSession;
export const actorOf = (session: ConsoleSession) => `console ${session.role} "${session.tokenName}"`;

export const requireAdmin = (_req: unknown, res: Response, next: NextFunction) => {
  if (sessionOf(res).role !== 'admin') throw new ConsoleForbiddenError('A viewer token sees everything and can act on nothing, nor reveal personal values.');
  next();
};

/**
 * A POST from another site is refused, whatever its cookies: the browser says where it came from in
 * `Sec-Fetch-Site`, and in `Origin`, which must then be this host (as the client asked for it,
 * behind TRUST_PROXY's proxies too). Sign-in is held to it as well (login CSRF).
 */
function sameSite(req: Request, _res: Response, next: () => void): void {
  const site = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  if ((site !== undefined && site !== 'same-origin' && site !== 'none') || (origin !== undefined && hostOf(origin) !== req.host)) {
    throw new ConsoleForbiddenError('The console accepts forms from its own pages only.');
  }
  next();
}

/** The host (and port) of an Origin header; undefined for `null` or anything that is not a URL. */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
