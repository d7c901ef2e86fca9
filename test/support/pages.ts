import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes';

/** A file of the repository, as text. */
export const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The documentation's pages: the README and every page of docs/. */
export const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];
