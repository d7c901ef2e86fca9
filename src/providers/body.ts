import { ProviderKind } from '../../contracts';
import { bodyText } from './github';
import { parseJsonObject } from './json';

/** The parsed body of a stored event, as its adapter parsed it on receipt (GitHub's form-encoded bodies included). */
export function parseStoredBody(body: { provider: ProviderKind; contentType: string | null; source: string }, raw: Buffer): Record<string, unknown> {
  const text = body.provider === ProviderKind.GITHUB ? bodyText(raw, body.contentType, body.source) : raw.toString('utf8');
  return parseJsonObject(text, body.source);
}
