import { ConfigError } from '../core/errors';
import { splitList } from '../core/env';

/** The bearer tokens of `/admin`, `/codec` and `/v1`: who may use each and how long each must be. */

/**
 * A `/v1` bearer token and the scope it acts in: endpoints, messages and idempotency keys belong
 * to the scope, so a token can be rotated (two tokens, one scope) without orphaning anything.
 */
export interface ApiToken {
  scope: string;
  token: string;
}

/** An admin token and the name it acts under. */
export interface NamedToken {
  name: string;
  token: string;
}

/** Admin, codec and API tokens are at least this long: guessed online they must stay out of reach. */
export const MIN_TOKEN_LENGTH = 32;

const SCOPE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `API_TOKENS="shop:tok_… billing:tok_…"`: `<scope>:<token>` entries separated by spaces or commas, each token at least 32 characters. */
export function apiTokens(value: string | undefined): ApiToken[] {
  return namedTokens('API_TOKENS', value, 'scope').map(({ name, token }) => ({
    scope: name,
    token: longToken(`API_TOKENS' token for the scope "${name}"`, token),
  }));
}

/** ADMIN_TOKEN (named `admin`) and `ADMIN_TOKENS="alice:… ci:…"`, each at least 32 characters. */
export function adminTokens(env: NodeJS.ProcessEnv): NamedToken[] {
  const named = namedTokens('ADMIN_TOKENS', env.ADMIN_TOKENS, 'name').map(({ name, token }) => ({
    name,
    token: longToken(`ADMIN_TOKENS' token "${name}"`, token),
  }));
  const tokens = [...(env.ADMIN_TOKEN ? [{ name: 'admin', token: longToken('ADMIN_TOKEN', env.ADMIN_TOKEN) }] : []), ...named];
  if (new Set(tokens.map(({ token }) => token)).size !== tokens.length) throw new ConfigError('ADMIN_TOKEN and ADMIN_TOKENS name the same token twice.');
  if (new Set(tokens.map(({ name }) => name)).size !== tokens.length) throw new ConfigError('ADMIN_TOKENS names one name twice (ADMIN_TOKEN is "admin").');
  return tokens;
}

/**
 * `VIEWER_TOKENS="oncall:… support:…"`: console sign-ins that see everything and can act on nothing
 * and reveal nothing; at least 32 characters each, none also an admin token.
 */
export function viewerTokens(env: NodeJS.ProcessEnv, admins: readonly NamedToken[]): NamedToken[] {
  const tokens = namedTokens('VIEWER_TOKENS', env.VIEWER_TOKENS, 'name').map(({ name, token }) => ({
    name,
    token: longToken(`VIEWER_TOKENS' token "${name}"`, token),
  }));
  if (tokens.some(({ token }) => admins.some((admin) => admin.token === token)))
    throw new ConfigError('VIEWER_TOKENS lists a token that is also an admin token.');
  return tokens;
}

/**
 * `npm run dev`'s admin token when none is set: public, like its development signing secrets, so
 * the console and `/admin` work out of the box on a receiver that listens on loopback only.
 */
export const DEVELOPMENT_ADMIN_TOKEN = 'dev-admin-token-public-not-a-secret-0123456789';

/** `<name>:<token>` entries separated by spaces or commas. */
function namedTokens(variable: string, value: string | undefined, what: 'scope' | 'name'): NamedToken[] {
  const tokens = splitList(value).map((entry) => {
    const colon = entry.indexOf(':');
    const name = entry.slice(0, colon);
    const token = entry.slice(colon + 1);
    if (colon === -1 || !SCOPE_NAME.test(name) || token === '') {
      throw new ConfigError(`${variable} must list <${what}>:<token> entries (for example "shop:tok_…"); a ${what} is lower-case letters, digits, "-" or "_".`);
    }
    return { name, token };
  });
  if (new Set(tokens.map(({ token }) => token)).size !== tokens.length) throw new ConfigError(`${variable} lists the same token twice.`);
  return tokens;
}

export function longToken(what: string, token: string): string {
  if (token.length < MIN_TOKEN_LENGTH) throw new ConfigError(`${what} must be at least ${MIN_TOKEN_LENGTH} characters (for example: openssl rand -hex 32).`);
  return token;
}
