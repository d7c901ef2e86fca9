import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../src/core/logger';
import { createAdminRouter, type AdminDeps } from '../../src/http/admin/router';

const TOKEN = 'admin-unit-token-0123456789abcdef0123456789';

/**
 * `/admin` alone on a port of its own, over whatever fakes of the operations a test gives it, behind
 * one token named "ops": what its routes make of a request, without Temporal or a database.
 */
export async function serveAdmin(deps: Omit<AdminDeps, 'tokens'>) {
  const app = express().use('/admin', createAdminRouter({ ...deps, tokens: [{ name: 'ops', token: TOKEN }] }, silentLogger));
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin`;
  return {
    /** A JSON POST as the "ops" token. */
    post: (path: string, body: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
