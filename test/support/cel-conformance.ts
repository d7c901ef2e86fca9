import * as bufbuild from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';
import { Environment, evaluate } from '@marcbachmann/cel-js';
import { CEL_OPTIONS } from '../../src/core/filters';

/**
 * CEL's conformance suite (cel-spec's `SimpleTest`s, as `@bufbuild/cel-spec` ships them), run
 * against a CEL library, for what a filter over a JSON body can meet: every test whose bindings and
 * answer are JSON's values and CEL's own (int, uint, double, string, bytes, bool, null, lists,
 * maps, errors). Tests of protobuf messages, enums, type values, containers, unknowns and
 * check-only answers are left out: no body is a protobuf message.
 */

/** One value of the suite's `cel.expr.Value`, in protobuf's JSON form. */
type Value = {
  nullValue?: unknown;
  boolValue?: boolean;
  int64Value?: string | number;
  uint64Value?: string | number;
  doubleValue?: number | string;
  stringValue?: string;
  bytesValue?: string;
  listValue?: { values?: Value[] };
  mapValue?: { entries?: Array<{ key: Value; value: Value }> };
};

interface SimpleTest {
  name: string;
  expr: string;
  disableCheck?: boolean;
  bindings?: Record<string, { value?: Value }>;
  value?: Value;
  evalError?: unknown;
  anyEvalErrors?: unknown;
}

interface Suite {
  name: string;
  suites?: Suite[];
  tests?: Array<{ original: object }>;
}

/**
 * How a test is counted: `core` (the language, checked), `unchecked` (the suite's `disableCheck`:
 * what an evaluator without a type checker answers), `extensions` (the string, math, encoders,
 * bindings, block, optionals and two-variable comprehension libraries).
 */
export type Category = 'core' | 'unchecked' | 'extensions';
export const CATEGORIES: readonly Category[] = ['core', 'unchecked', 'extensions'];

const EXTENSION_SUITES = new Set(['bindings_ext', 'block_ext', 'encoders_ext', 'math_ext', 'optionals', 'string_ext', 'macros2']);
/** What a JSON body never holds: messages, enums, type values, containers, partial evaluation, answers of the type checker (alone, or typed). */
const OUT_OF_JSON =
  /typedResult|objectValue|messageType|TestAllTypes|google\.protobuf|cel\.expr|proto[23]|enumValue|typeValue|"container"|unknown|checkOnly|abstractType|"type":\s*\{/;

/** What the suite's values are as a library takes them: its unsigned integers and maps are its own. */
export interface CelLibrary {
  evaluate(expression: string, bindings: Record<string, unknown>): unknown;
  uint(value: bigint): unknown;
  /** A value of the library's own (its uint, list or map) as a plain one, or undefined for any other. */
  plain(value: unknown): { uint: bigint } | unknown[] | Map<unknown, unknown> | undefined;
}

export type Tally = Record<Category, { passed: number; total: number }>;

/** cel-js's unsigned integers, which it does not export: the class of its answer to `1u`. */
const UnsignedInt = (evaluate('1u') as object).constructor as new (value: bigint) => { valueOf(): bigint };

/** cel-js as filters and matches run it (src/core/filters.ts), with any name a test binds taken as `dyn`. */
export const celJs: CelLibrary = {
  evaluate: (() => {
    const environment = new Environment({ ...CEL_OPTIONS, unlistedVariablesAreDyn: true });
    return (expression, bindings) => environment.evaluate(expression, bindings);
  })(),
  uint: (value) => new UnsignedInt(value),
  plain: (value) => (value instanceof UnsignedInt ? { uint: value.valueOf() } : undefined),
};

/** `@bufbuild/cel`, with the extension functions it ships (strings); its errors are answers, not exceptions. */
export const bufbuildCel: CelLibrary = {
  evaluate(expression, bindings) {
    const answer = bufbuild.run(expression, bindings as Record<string, bufbuild.CelInput>, { funcs: strings });
    if (bufbuild.isCelError(answer)) throw answer;
    return answer;
  },
  uint: (value) => bufbuild.celUint(value),
  plain: (value) =>
    bufbuild.isCelUint(value)
      ? { uint: value.value }
      : bufbuild.isCelList(value)
        ? [...value]
        : bufbuild.isCelMap(value)
          ? new Map(value.entries())
          : undefined,
};

/** Runs every JSON-representable test of the suite against the library: passed and total, by category. */
export function runConformance(library: CelLibrary): Tally {
  const tally = Object.fromEntries(CATEGORIES.map((category) => [category, { passed: 0, total: 0 }])) as Tally;
  const visit = (suite: Suite, top: string) => {
    for (const { original } of suite.tests ?? []) {
      if (OUT_OF_JSON.test(JSON.stringify(original))) continue;
      const test = original as SimpleTest;
      const category: Category = test.disableCheck ? 'unchecked' : EXTENSION_SUITES.has(top) ? 'extensions' : 'core';
      tally[category].total++;
      if (passes(library, test)) tally[category].passed++;
    }
    for (const child of suite.suites ?? []) visit(child, top || child.name);
  };
  visit(conformance as Suite, '');
  return tally;
}

function passes(library: CelLibrary, test: SimpleTest): boolean {
  const bindings = Object.fromEntries(Object.entries(test.bindings ?? {}).map(([name, { value }]) => [name, input(library, value ?? {})]));
  let answer: unknown;
  try {
    answer = library.evaluate(test.expr, bindings);
  } catch {
    return test.evalError !== undefined || test.anyEvalErrors !== undefined;
  }
  if (test.evalError !== undefined || test.anyEvalErrors !== undefined) return false;
  return same(canonical(library, answer), expected(test.value ?? { boolValue: true }));
}

const asDouble = (value: number | string) => (typeof value === 'string' ? Number(value) : value);

function input(library: CelLibrary, value: Value): unknown {
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.int64Value !== undefined) return BigInt(value.int64Value);
  if (value.uint64Value !== undefined) return library.uint(BigInt(value.uint64Value));
  if (value.doubleValue !== undefined) return asDouble(value.doubleValue);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.bytesValue !== undefined) return Uint8Array.from(Buffer.from(value.bytesValue, 'base64'));
  if (value.listValue) return (value.listValue.values ?? []).map((item) => input(library, item));
  if (value.mapValue) return new Map((value.mapValue.entries ?? []).map((entry) => [input(library, entry.key), input(library, entry.value)]));
  return null;
}

/** A value as `[type, content]`, maps' entries sorted, so that two answers compare as text. */
type Canonical = [string, ...unknown[]];
const byKey = (a: [Canonical, Canonical], b: [Canonical, Canonical]) => (JSON.stringify(a[0]) < JSON.stringify(b[0]) ? -1 : 1);

function expected(value: Value): Canonical {
  if (value.boolValue !== undefined) return ['bool', value.boolValue];
  if (value.int64Value !== undefined) return ['int', String(value.int64Value)];
  if (value.uint64Value !== undefined) return ['uint', String(value.uint64Value)];
  if (value.doubleValue !== undefined) return ['double', asDouble(value.doubleValue)];
  if (value.stringValue !== undefined) return ['string', value.stringValue];
  if (value.bytesValue !== undefined) return ['bytes', Buffer.from(value.bytesValue, 'base64').toString('hex')];
  if (value.listValue) return ['list', (value.listValue.values ?? []).map(expected)];
  if (value.mapValue)
    return ['map', (value.mapValue.entries ?? []).map((entry): [Canonical, Canonical] => [expected(entry.key), expected(entry.value)]).sort(byKey)];
  return ['null'];
}

function canonical(library: CelLibrary, value: unknown): Canonical {
  const own = library.plain(value);
  if (own !== undefined) return Array.isArray(own) || own instanceof Map ? canonical(library, own) : ['uint', String(own.uint)];
  if (value === null || value === undefined) return ['null'];
  if (typeof value === 'boolean') return ['bool', value];
  if (typeof value === 'bigint') return ['int', String(value)];
  if (typeof value === 'number') return ['double', value];
  if (typeof value === 'string') return ['string', value];
  if (value instanceof Uint8Array) return ['bytes', Buffer.from(value).toString('hex')];
  if (Array.isArray(value)) return ['list', value.map((item) => canonical(library, item))];
  if (value instanceof Map)
    return ['map', [...value].map(([key, item]): [Canonical, Canonical] => [canonical(library, key), canonical(library, item)]).sort(byKey)];
  if (typeof value === 'object' && value.constructor === Object)
    return [
      'map',
      Object.entries(value)
        .map(([key, item]): [Canonical, Canonical] => [['string', key], canonical(library, item)])
        .sort(byKey),
    ];
  return ['other', String(value.constructor?.name)];
}

/** Equal as CEL's answers: NaN is NaN, and -0 is 0. */
const same = (a: Canonical, b: Canonical) => text(a) === text(b);
const text = (value: Canonical) =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === 'number' ? (Number.isNaN(item) ? 'NaN' : Object.is(item, -0) ? 0 : item) : item));
