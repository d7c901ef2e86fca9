import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo, type QueryDefinition, type SignalDefinition, type Workflow } from '@temporalio/workflow';
import { ENTITY_KEY_FIELD, entityVersionField, type EntityDeclaration, type Version } from './entities';
import { copyValues, MAX_FIELD_LENGTH, readPointer, type EventFields, type EventFieldSpec } from './event-fields';
import { statusQuery, type BodyField, type EventOutcome, type ProviderKind, type WebhookEvent } from './events';
import type { EventWait, EventWaitDeclaration } from './waits';

/** Input checked: the value to use, or what is wrong with it, in one sentence an operator can act on. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Where a signal is going, for checks that depend on it (a subscription update names its subscription). */
export interface SignalTarget {
  workflowId: string;
}

/** A signal a flow handles, with the check operators' input must pass before anything is sent. */
export interface FlowSignal<Arg = unknown> {
  readonly name: string;
  readonly definition: SignalDefinition<[Arg]> | SignalDefinition<[Arg?]>;
  /** Checks an operator's input (the CLI's `--data`, `/admin`'s JSON body); what is sent is the checked value. */
  readonly read: (input: unknown, target: SignalTarget) => Checked<Arg | undefined>;
  /** Accepted only while the workflow says it waits for it (`EventProgress.awaiting`); the rest may come early. */
  readonly onlyWhileAwaited: boolean;
  readonly description: string;
  /** The argument's text fields, when it is an object of them (the console builds its form from them); null when it is other JSON. */
  readonly fields: readonly string[] | null;
}

/** A signal's check, which may name the text fields of the object it accepts. */
export type SignalReader<Arg> = FlowSignal<Arg>['read'] & { fields?: readonly string[] };

/** A signal of a flow: its definition, the check of operators' input, and when it is accepted. */
export function flowSignal<Arg>(
  definition: SignalDefinition<[Arg]> | SignalDefinition<[Arg?]>,
  read: SignalReader<Arg>,
  { description, onlyWhileAwaited = false }: { description: string; onlyWhileAwaited?: boolean },
): FlowSignal<Arg> {
  return { name: definition.name, definition, read, onlyWhileAwaited, description, fields: read.fields ?? null };
}

/** Provider kinds and the event types of each that a flow handles unless a source routes them elsewhere. */
export type FlowEvents = { readonly [Kind in ProviderKind]?: readonly string[] };

/**
 * Which worker build runs a flow's executions once workers are versioned (WORKER_BUILD_ID, docs/deploys.md),
 * and why. `AUTO_UPGRADE`: each workflow task goes to the deployment's current build, so a running
 * execution moves to a new build when it is made current; every change to the flow must replay its
 * recorded histories (`patched()` where it would not). `PINNED`: an execution stays on the build it
 * started on, which must keep running until the execution ends.
 */
export interface FlowVersioning {
  readonly behavior: VersioningBehavior;
  /** Why this behaviour fits the flow: how long its executions live, and what a move between builds would cost. */
  readonly why: string;
}

/** What `defineFlow` is given. */
export interface FlowDeclaration<W extends Workflow, Personal extends string> {
  /** The workflow function; its name is the workflow type. */
  workflow: W;
  /** One line for `durable-webhooks flows`. */
  description: string;
  /** Started by durable-webhooks itself (an entity, a delivery, a schedule), never for a webhook event. */
  internal?: boolean;
  /** The event types it handles by default, by provider kind; a source's `routes` may send others to it. */
  handles?: FlowEvents;
  /** Pinned to the build it started on, or moved to the current build: every flow chooses, and says why. */
  versioning: FlowVersioning;
  /**
   * What it needs from the body, by JSON pointer (RFC 6901). `copy`: IDs, amounts, currencies and
   * statuses, copied into the input. `personal`: where the personal data its activities use is; the
   * input says only whether each is there, and activities read the value from the stored body.
   */
  fields?: { copy?: Readonly<Record<string, string>>; personal?: Readonly<Record<Personal, string>> };
  /**
   * Whose event it is, by JSON pointer into the body (a Stripe Connect account, a GitHub
   * installation): a drain of held events takes turns by tenant, so one tenant's backlog never
   * delays another's, and Temporal's fairness key is it.
   */
  tenant?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of signals with different arguments
  signals?: ReadonlyArray<FlowSignal<any>>;
  /** Queries besides `status`, which every event flow answers. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of queries with different results
  queries?: ReadonlyArray<QueryDefinition<any>>;
  /** What the Temporal UI's one-line summary adds after `source · type · subject`, from the copied fields. */
  summary?: (fields: EventFields) => string | undefined;
  /**
   * What it does follows from the signed body alone, never from the event type (a Shopify order is
   * fulfilled when its body says it is paid, whatever the topic): true lets a kind whose type is
   * unsigned deliver the same signed bytes under several types, each its own event, and the replay
   * guard then refuses them again only under the same type (docs/security.md, Replays). A flow that
   * acts on the type leaves it false: the same bytes under any other ID are a replay.
   * @default false
   */
  decidesFromBody?: boolean;
  /**
   * Its events are about a business object, and take turns per object in the order of their
   * versions (docs/entities.md): the object's ID and version by JSON pointer into the signed body,
   * and the order, `serial`, `latest` or `coalesce` (with its quiet time and ceiling). Its workflow
   * runs in `handleEvent` with the flow named.
   */
  key?: EntityDeclaration;
  /**
   * The other events it may wait for, by name (docs/flows.md#wait-for-another-event): the workflow
   * calls `waitForEvent` with one, and the receiver indexes each stored event of an awaited type by
   * the field its match compares, so a wait finds an event that came before it as well as after.
   */
  waits?: Readonly<Record<string, EventWaitDeclaration>>;
}

/** One flow, as everything outside it sees it: the router, the receiver, operators' tools, the worker. */
export interface Flow<W extends Workflow = Workflow, Personal extends string = string> {
  readonly name: string;
  readonly workflow: W;
  readonly description: string;
  readonly internal: boolean;
  readonly handles: FlowEvents;
  readonly versioning: FlowVersioning;
  readonly fields: EventFieldSpec;
  /** The JSON pointer of its tenant field, if it names one. */
  readonly tenant: string | undefined;
  /** See `FlowDeclaration.decidesFromBody`. */
  readonly decidesFromBody: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see FlowDeclaration
  readonly signals: ReadonlyArray<FlowSignal<any>>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see FlowDeclaration
  readonly queries: ReadonlyArray<QueryDefinition<any>>;
  /** The summary's flow-specific part for these fields, if any. */
  summarize(fields: EventFields): string | undefined;
  /** The fields `fields` names, read from a parsed body: copied values, and `true`/`false` for each personal one. */
  readFields(payload: unknown): EventFields;
  /** The tenant of a parsed body: its tenant field's value as text, if the flow names one and the body has it. */
  readTenant(payload: unknown): string | undefined;
  /** A personal field, for an activity to read from the stored body. */
  bodyField(name: Personal): BodyField;
  /** See `FlowDeclaration.key`. */
  readonly key: EntityDeclaration | undefined;
  /** An event's key and version, from its copied fields; no key when the body has none. */
  entityOf(fields: EventFields): { key: string | undefined; version: Version };
  /** See `FlowDeclaration.waits`. */
  readonly waits: readonly EventWait[];
  /** One of its waits, for `waitForEvent`. */
  wait(name: string): EventWait;
}

/** A flow that handles webhook events: one event in, its outcome out. */
export type EventFlow<Personal extends string = string> = Flow<(event: WebhookEvent) => Promise<EventOutcome>, Personal>;

/**
 * Declares a flow beside its workflow. Everything else (the routes from event types, the fields the
 * receiver copies, the signals operators may send and their checks, the worker's registration, the
 * `flows` command) is derived from these declarations.
 */
export function defineFlow<W extends Workflow, Personal extends string = never>(declaration: FlowDeclaration<W, Personal>): Flow<W, Personal> {
  const { workflow, description, internal = false, handles = {}, versioning, signals = [], queries = [], summary, decidesFromBody = false } = declaration;
  // A versioned worker reports AUTO_UPGRADE for every workflow without a behaviour of its own (its
  // default, src/temporal/worker.ts). Temporal refuses a behaviour from an unversioned worker, so
  // PINNED is declared only to a run whose first task a versioned worker took (an unversioned one has
  // a build ID of its own, but no deployment name).
  if (versioning.behavior === 'PINNED')
    setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'PINNED' } : {}), workflow);
  const { key } = declaration;
  const waits = Object.entries(declaration.waits ?? {}).map(([name, wait]): EventWait => ({ ...wait, name, flow: workflow.name, fields: wait.fields ?? {} }));
  // The key and the version travel as copied fields, read by the receiver from the signed body.
  const entityFields = key
    ? { [ENTITY_KEY_FIELD]: key.key, ...Object.fromEntries(key.version.map((pointer, index) => [entityVersionField(index), pointer])) }
    : {};
  const fields: EventFieldSpec = {
    copy: { ...declaration.fields?.copy, ...entityFields },
    ...(declaration.fields?.personal && { personal: declaration.fields.personal }),
  };
  return {
    name: workflow.name,
    workflow,
    description,
    internal,
    handles,
    versioning,
    fields,
    tenant: declaration.tenant,
    decidesFromBody,
    signals,
    queries: internal ? queries : [statusQuery, ...queries],
    summarize: (values) => summary?.(values),
    readFields: (payload) => copyFields(fields, payload),
    readTenant(payload) {
      const value = declaration.tenant === undefined ? undefined : readPointer(payload, declaration.tenant);
      return (typeof value === 'string' && value !== '' && value.length <= MAX_FIELD_LENGTH) || typeof value === 'number' ? String(value) : undefined;
    },
    bodyField(name) {
      const pointer = fields.personal?.[name];
      if (pointer === undefined) throw new TypeError(`The flow ${workflow.name} has no personal field "${name}".`);
      return { fromBody: pointer };
    },
    key,
    entityOf(values) {
      const id = values[ENTITY_KEY_FIELD];
      const version = (key?.version ?? []).map((_, index) => values[entityVersionField(index)]);
      return {
        key: (typeof id === 'string' && id !== '') || typeof id === 'number' ? String(id) : undefined,
        version: version.map((part) => (typeof part === 'string' || typeof part === 'number' ? part : null)),
      };
    },
    waits,
    wait(name) {
      const wait = waits.find((each) => each.name === name);
      if (!wait) throw new TypeError(`The flow ${workflow.name} declares no wait "${name}".`);
      return wait;
    },
  };
}

function copyFields(spec: EventFieldSpec, payload: unknown): EventFields {
  const fields = copyValues(spec.copy, payload);
  for (const [name, pointer] of Object.entries(spec.personal ?? {})) {
    const value = readPointer(payload, pointer);
    fields[name] = value !== undefined && value !== null && value !== '';
  }
  return fields;
}

/** True for a value `defineFlow` made. */
export function isFlow(value: unknown): value is Flow {
  return typeof value === 'object' && value !== null && typeof (value as Flow).workflow === 'function' && typeof (value as Flow).readFields === 'function';
}

/**
 * Checks a signal argument that is a JSON object of optional string fields (`{"by":"ops"}`): absent
 * or null is no argument; anything else named.
 */
export function readOptionalStrings<Keys extends string>(
  signal: string,
  keys: readonly Keys[],
): ((input: unknown) => Checked<Partial<Record<Keys, string>> | undefined>) & { fields: readonly Keys[] } {
  const read = (input: unknown): Checked<Partial<Record<Keys, string>> | undefined> => {
    if (input === undefined || input === null) return { ok: true, value: undefined };
    if (typeof input !== 'object' || Array.isArray(input))
      return { ok: false, error: `the ${signal} argument must be a JSON object such as {"${keys[0]}":"…"}` };
    const unknown = Object.keys(input).filter((key) => !(keys as readonly string[]).includes(key));
    if (unknown.length > 0) return { ok: false, error: `${signal} takes ${keys.join(' and ')}, not ${unknown.join(', ')}` };
    for (const [key, value] of Object.entries(input)) {
      if (typeof value !== 'string' || value.length > MAX_FIELD_LENGTH)
        return { ok: false, error: `${key} must be a string of up to ${MAX_FIELD_LENGTH} characters` };
    }
    return { ok: true, value: input as Partial<Record<Keys, string>> };
  };
  return Object.assign(read, { fields: keys });
}
