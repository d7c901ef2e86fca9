import type { Request } from 'express';

/** A query parameter's trimmed value; undefined when absent or blank. */
export function text(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
