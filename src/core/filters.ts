import { Environment } from '@marcbachmann/cel-js';

/**
 * A route's filter: a CEL expression over the verified event (docs/flows.md#filters), compiled
 * when the configuration loads. Its cost is bounded before it ever runs: a size, a depth, and no
 * comprehension inside another, so one evaluation reads each list of the body at most once per
 * node of the expression; and no `matches()`, whose JavaScript regular expressions can backtrack
 * for minutes on text a sender chose.
 */

/** The bounds every filter is held to when it is compiled. */
export const FILTER_LIMITS = {
  /** Characters of the expression. */
  maxLength: 1_000,
  /** Nodes of its syntax tree: each literal, name, field, operator and call. */
  maxNodes: 200,
  /** Nesting of calls, fields and parentheses. */
  maxDepth: 16,
} as const;

/** The comprehension macros, which iterate over a list or map. */
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

/** What a filter sees of one event: the verified body, and where and as what it came. */
export interface FilterInput {
  body: unknown;
  /** `tenant`: the subscriber's flow's tenant field read from the signed body, null where it names none or the body lacks it. */
  event: { type: string; source: string; provider: string; tenant: string | null };
}

export interface Filter {
  readonly expression: string;
  /** True when it reads `event` beyond its source, provider and tenant (the type may be an unsigned header), not only the signed body. */
  readonly readsEvent: boolean;
  /** @throws FilterError when the expression does not yield a boolean for this event (a field it needs is missing, a type mismatch). */
  matches(input: FilterInput): boolean;
}

/** A filter that could not decide for one event: recorded as that route's failure. */
export class FilterError extends Error {
  override name = 'FilterError';
}

/** The language filters and matches are written in: CEL as cel-js evaluates it, list and map literals of mixed types allowed, as in CEL's spec (test/unit/cel-conformance.test.ts). */
export const CEL_OPTIONS = { homogeneousAggregateLiterals: false } as const;

const environment = new Environment({
  ...CEL_OPTIONS,
  unlistedVariablesAreDyn: false,
  limits: { maxAstNodes: FILTER_LIMITS.maxNodes, maxDepth: FILTER_LIMITS.maxDepth },
})
  .registerVariable('body', 'dyn', { description: 'The verified body, as JSON' })
  .registerVariable('event', 'map', { description: 'type, source, provider and tenant' });

/** @throws Error with a sentence saying what is wrong: syntax, an unknown name, a bound exceeded. */
export function compileFilter(expression: string): Filter {
  const { evaluate, shape } = compile(environment, expression, 'body and event');
  return { expression, readsEvent: shape.readsEvent, matches: (input) => evaluate(input) };
}

/** What a wait's match sees: the awaited event, as a filter does (but a tenant, which is a subscriber's), and the waiting flow's values. */
export interface MatchInput {
  body: unknown;
  event: Omit<FilterInput['event'], 'tenant'>;
  waiting: Record<string, unknown>;
}

/** A wait's match (contracts' `EventWaitDeclaration.match`), with the equality that finds its candidates. */
export interface Match {
  readonly expression: string;
  /** The top-level `body.<field> == waiting.<name>`: the awaited body's field (a JSON pointer), and the waiting value it must equal. */
  readonly key: { pointer: string; waiting: string };
  /** @throws FilterError as `Filter.matches` does. */
  matches(input: MatchInput): boolean;
}

const matchEnvironment = environment.clone().registerVariable('waiting', 'map', { description: 'The waiting flow’s values' });

/**
 * A wait's match, held to a filter's bounds, whose top level (alone, or one side of `&&`) compares
 * one body field to one waiting value with `==`: stored events are indexed by that field.
 * @throws Error with a sentence saying what is wrong.
 */
export function compileMatch(expression: string): Match {
  const { evaluate, ast } = compile(matchEnvironment, expression, 'body, event and waiting');
  const key = equalityOf(ast);
  if (!key)
    throw new Error(
      'compares no body field to a waiting value at its top level; write body.<field> == waiting.<name> (then && anything else), the field stored events are found by',
    );
  return { expression, key, matches: (input) => evaluate(input) };
}

function compile(env: Environment, expression: string, names: string) {
  if (expression.trim() === '') throw new Error('is empty; write a CEL expression such as body.amount > 1000');
  if (expression.length > FILTER_LIMITS.maxLength) throw new Error(`is ${expression.length} characters long; a filter has at most ${FILTER_LIMITS.maxLength}`);
  let parsed: ReturnType<Environment['parse']>;
  let type: string | undefined;
  try {
    parsed = env.parse(expression);
    const checked = parsed.check();
    if (!checked.valid) throw checked.error;
    type = checked.type;
  } catch (error) {
    throw new Error(`is not a CEL expression over ${names}: ${firstLine(error)}`, { cause: error });
  }
  if (type !== 'bool' && type !== 'dyn') throw new Error(`yields ${type}, not a bool: a filter says whether the route takes the event`);
  const ast = parsed.ast as Node;
  const shape = walk(ast, 0);
  if (shape.nestedComprehension) throw new Error('has a comprehension (all, exists, map, filter) inside another, whose cost grows with the square of a list');
  if (shape.regex)
    throw new Error('calls matches(), whose regular expressions can take minutes on text a sender chose; compare with ==, startsWith, endsWith or contains');
  const evaluate = (input: object): boolean => {
    let result: unknown;
    try {
      result = parsed(input as Record<string, unknown>);
    } catch (error) {
      throw new FilterError(firstLine(error), { cause: error });
    }
    if (typeof result !== 'boolean') throw new FilterError(`yielded ${typeof result === 'bigint' ? 'an int' : typeof result}, not a bool`);
    return result;
  };
  return { evaluate, shape, ast };
}

/** The `body.a.b == waiting.x` (either way round) at the top of `node` or of one of its `&&` sides. */
function equalityOf(node: Node): Match['key'] | undefined {
  if (node.op === '&&') {
    for (const side of children(node.args)) {
      const key = equalityOf(side);
      if (key) return key;
    }
    return undefined;
  }
  if (node.op !== '==') return undefined;
  const [left, right] = [...children(node.args)];
  const sides = [fieldPath(left), fieldPath(right)];
  const body = sides.find((path) => path?.[0] === 'body' && path.length > 1);
  const waiting = sides.find((path) => path?.[0] === 'waiting' && path.length === 2);
  if (!body || !waiting) return undefined;
  return {
    pointer: body
      .slice(1)
      .map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`)
      .join(''),
    waiting: waiting[1]!,
  };
}

/** `a.b.c` as ['a', 'b', 'c']; undefined for anything but names and field selections. */
function fieldPath(node: Node | undefined): string[] | undefined {
  if (!node) return undefined;
  if (node.op === 'id' && typeof node.args === 'string') return [node.args];
  if (node.op !== '.' || !Array.isArray(node.args) || typeof node.args[1] !== 'string') return undefined;
  const parent = fieldPath(node.args[0] as Node);
  return parent && [...parent, node.args[1]];
}

interface Node {
  op: string;
  args: unknown;
}

interface Shape {
  readsEvent: boolean;
  regex: boolean;
  nestedComprehension: boolean;
}

/** What a filter reads of `event` that no unsigned header sets: the source and kind its URL and secret fix, the tenant from the signed body. */
const VOUCHED_EVENT_MEMBERS = new Set(['source', 'provider', 'tenant']);

function walk(node: Node, comprehensions: number): Shape {
  const shape: Shape = { readsEvent: false, regex: false, nestedComprehension: false };
  const path = fieldPath(node);
  if (path?.[0] === 'event' && path.length === 2 && VOUCHED_EVENT_MEMBERS.has(path[1]!)) return shape;
  const call = (node.op === 'call' || node.op === 'rcall') && Array.isArray(node.args) ? String(node.args[0]) : undefined;
  if (node.op === 'id' && node.args === 'event') shape.readsEvent = true;
  if (call === 'matches') shape.regex = true;
  const depth = call !== undefined && COMPREHENSIONS.has(call) ? comprehensions + 1 : comprehensions;
  if (depth > 1) shape.nestedComprehension = true;
  for (const child of children(node.args)) {
    const inner = walk(child, depth);
    shape.readsEvent ||= inner.readsEvent;
    shape.regex ||= inner.regex;
    shape.nestedComprehension ||= inner.nestedComprehension;
  }
  return shape;
}

function* children(value: unknown): Generator<Node> {
  if (Array.isArray(value)) for (const item of value) yield* children(item);
  else if (typeof value === 'object' && value !== null && typeof (value as Node).op === 'string') yield value as Node;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}
