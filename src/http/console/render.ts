import type { Response } from 'express';
import type { ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

/** A page: React's static markup, every value escaped; never HTML put together from strings. */
export function page(res: Response, element: ReactElement): void {
  res.type('html').send(`<!doctype html>${renderToStaticMarkup(element)}`);
}
