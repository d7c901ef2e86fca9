import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection, type TLSConfig } from '@temporalio/client';
import { isLoopbackHost } from '../core/env';

/** True when a Temporal frontend answers at the address within a second (over TLS with `tls`). */
export async function isServing(address: string, tls?: TLSConfig): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1_000, ...(tls && { tls }) });
    try {
      await connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.getSystemInfo({}));
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

/** Resolves once a server process we started answers at `address`; rejects if it exits first or the time runs out. */
export async function waitUntilServing(what: string, address: string, exited: Promise<number | null>, timeoutMs: number, tls?: TLSConfig): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${what} exited with code ${exitCode} before it was ready (is ${address} in use?).`);
    if (await isServing(address, tls)) return;
    await delay(250);
  }
  throw new Error(`${what} did not answer at ${address} within ${timeoutMs / 1000} s.`);
}

/** SIGTERM, then SIGKILL after 10 s; resolves when the process has exited. */
export async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export function splitAddress(address: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(address);
  if (!match) throw new Error(`TEMPORAL_ADDRESS must be host:port, not "${address}".`);
  return { host: match[1]!, port: Number(match[2]) };
}

export function isLoopback(address: string): boolean {
  return isLoopbackHost(splitAddress(address).host);
}

/**
 * Dynamic config every Temporal server we run sets beyond its defaults. Task-queue fairness: each
 * event workflow starts with its tenant as `priority.fairnessKey` (src/intake/start-data.ts), and
 * with fairness on, matching hands out a backlog's workflow and activity tasks tenant by tenant
 * instead of first in, first out (docs/operating.md#bulk-days).
 */
export const SERVER_DYNAMIC_CONFIG = { 'matching.enableFairness': true } as const;

/** The same as `temporal server start-dev` flags. */
export const devServerDynamicConfigArgs = (): string[] =>
  Object.entries(SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${JSON.stringify(value)}`]);
