/** A field copied from an event's body into its workflow's input. */
export type FieldValue = string | number | boolean | null;
export type EventFields = Record<string, FieldValue>;

/** What one event flow needs from the body, by JSON pointer (RFC 6901); see `FlowDeclaration.fields`. */
export interface EventFieldSpec {
  copy: Readonly<Record<string, string>>;
  personal?: Readonly<Record<string, string>>;
}

/** A copied string longer than this is left out (and a flow that needs it refuses the event): IDs are far shorter. */
export const MAX_FIELD_LENGTH = 255;

/** The value at a JSON pointer (RFC 6901: `/a/b/0`, `~1` for `/`, `~0` for `~`), or undefined; own properties only. */
export function readPointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let value = document;
  for (const token of pointer.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof value !== 'object' || value === null || !Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The values at each pointer of `copy`, by name: scalars only, a string up to MAX_FIELD_LENGTH; anything else is left out. */
export function copyValues(copy: Readonly<Record<string, string>>, document: unknown): EventFields {
  const fields: EventFields = {};
  for (const [name, pointer] of Object.entries(copy)) {
    const value = readPointer(document, pointer);
    if (value === null || typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= MAX_FIELD_LENGTH))
      fields[name] = value;
  }
  return fields;
}
