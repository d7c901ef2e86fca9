import { millisecondsOf } from './duration';
import { ConfigError } from './errors';

/** Reading one environment variable as a typed value; each throws `ConfigError` naming the variable. */

/** A list of values that never contain spaces or commas (durations, tokens), separated by either. */
export function splitList(value: string | undefined): string[] {
  return (value ?? '').split(/[\s,]+/).filter(Boolean);
}

export function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false, not "${env[name]}".`);
}

export function durationMs(value: string, name: string): number {
  const ms = millisecondsOf(value);
  if (!Number.isFinite(ms) || ms < 0) throw new ConfigError(`${name} must list durations such as 0s 5s 5m 2h, not "${value}".`);
  return ms;
}

export function positiveDurationMs(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const raw = env[name] || fallback;
  const ms = millisecondsOf(raw);
  if (!(ms > 0)) throw new ConfigError(`${name} must be a positive duration such as 30s, not "${raw}".`);
  return ms;
}

/** A retention: a positive duration, or `forever` (null): nothing is removed. */
export function retentionMs(env: NodeJS.ProcessEnv, name: string, fallback: string): number | null {
  if ((env[name] ?? '').trim().toLowerCase() === 'forever') return null;
  try {
    return positiveDurationMs(env, name, fallback);
  } catch {
    throw new ConfigError(`${name} must be a positive duration such as 30d, or forever, not "${env[name]}".`);
  }
}

/** 0 asks the system for a free port. */
export function portNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 65535) throw new ConfigError(`${name} must be a port number (0-65535), not "${raw}".`);
  return value;
}

export function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = positiveIntegerOf(raw);
  if (value === undefined) throw new ConfigError(`${name} must be a positive integer, not "${raw}".`);
  return value;
}

/** The one positive-integer parser, for settings and command-line options: undefined for anything else. */
export function positiveIntegerOf(text: string): number | undefined {
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** One of a few words; unset means `fallback`. */
export function oneOf<Word extends string>(env: NodeJS.ProcessEnv, name: string, words: readonly Word[], fallback: Word): Word {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(words as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be ${words.join(' or ')}, not "${raw}".`);
  return raw as Word;
}

/**
 * True for a name or address that stays on this machine: `localhost` and `*.localhost`, 127.0.0.0/8
 * and `::1` (bare or in brackets), with or without a port.
 */
export function isLoopbackHost(host: string): boolean {
  // `[::1]:3000`, `::1` (a bare IPv6 address has no port), `localhost:3000`.
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':').length > 2 ? host : host.replace(/:\d+$/, '');
  const lower = name.toLowerCase();
  return lower === 'localhost' || lower.endsWith('.localhost') || lower === '::1' || lower === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(lower);
}

/**
 * A number of bytes: `65536`, or with a unit, `64KiB`, `5MiB`.
 * @throws ConfigError naming `what`, for anything else or a size that is not positive.
 */
export function readSize(value: unknown, what: string): number {
  const match = /^\s*(\d+)\s*(KiB|MiB)?\s*$/.exec(String(value));
  const bytes = match ? Number(match[1]) * (match[2] === 'MiB' ? 1024 * 1024 : match[2] === 'KiB' ? 1024 : 1) : NaN;
  if (!(bytes > 0) || !Number.isSafeInteger(bytes) || (typeof value !== 'string' && typeof value !== 'number'))
    throw new ConfigError(`${what} must be a positive number of bytes, such as 65536, 64KiB or 5MiB.`);
  return bytes;
}
