import type { Request, Response } from 'express';
import { FILTER_FIELDS, type EventFilter } from '../../temporal/visibility';
import { readRate } from '../../config/sources';
import { ConfigError, OperationRejectedError } from '../../core/errors';

/** Who acts on an `/admin` request: its bearer token's name. */
export const actor = (res: Response) => `admin token "${res.locals.tokenName as string}"`;

/** A request's JSON body as an object of unknown members, for each route's input check. */
export const bodyOf = <Fields extends string>(req: Request) => (req.body ?? {}) as Partial<Record<Fields, unknown>>;

/** A rate from a request (`20/s`, `600/m`, `20`), refused as the caller's mistake. */
export function rateOf(value: unknown): number {
  try {
    return readRate(value, '"rate"');
  } catch (error) {
    if (error instanceof ConfigError) throw new OperationRejectedError(error.message);
    throw error;
  }
}

/** `GET /admin/events`'s filter: the query parameters of the fields a bulk filter takes. */
export function filterOf(req: Request): EventFilter {
  return Object.fromEntries(FILTER_FIELDS.flatMap((field) => (typeof req.query[field] === 'string' ? [[field, req.query[field]]] : [])));
}
