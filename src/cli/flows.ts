import { Command } from 'commander';
import { isEntityField } from '../../contracts';
import { loadReceiverConfig } from '../config';
import { openDatabase } from '../db/database';
import { flowsMatched } from '../db/route-counts';
import { FLOWS, ROUTE_FLOW, Router } from '../flows';
import { createAdapter } from '../providers/registry';
import { jsonOption, print } from './output';

/** One flow as `durable-webhooks flows` shows it. */
export interface FlowListing {
  name: string;
  description: string;
  internal: boolean;
  /** Per source, the event types (or `prefix*`) it starts this flow for. */
  events: Record<string, string[]>;
  /**
   * Of those sources, the ones whose type comes from outside the signature (a header), and where:
   * the flow is picked by a value the provider did not sign (a replay under another type is refused).
   */
  unsignedTypes: Record<string, string>;
  /** It decides from the signed body, not the type (`FlowDeclaration.decidesFromBody`). */
  decidesFromBody: boolean;
  /**
   * Of the sources in `unsignedTypes`, those whose every flow decides from the signed body: there the
   * same body under another type is an event of its own; elsewhere it is refused as a replay.
   */
  replaysByType: string[];
  signals: { name: string; description: string; onlyWhileAwaited: boolean }[];
  fields: { copy: string[]; personal: string[] };
  /** The JSON pointer of its tenant field (a drain takes turns by tenant), or null. */
  tenant: string | null;
  queries: string[];
  /** Which worker build runs its executions once workers are versioned, and why. */
  versioning: { behavior: string; why: string };
  /** Its key, version and order, when its events take turns per business object (docs/entities.md). */
  key: { key: string; version: string[]; order: string; quiet?: string; ceiling?: string } | null;
  /** The other events it may wait for (docs/flows.md#wait-for-another-event): each wait's name, type, match and timeout. */
  waits: { name: string; type: string; match: string; timeout: string }[];
  /** Per source, the events it took over the last hour (its routes' filters held, or its type's one flow), when the body store is reachable (DATABASE_URL). */
  matchedLastHour?: Record<string, number>;
}

/** Every flow, with what each source routes to it, from the declarations and the sources' routes. */
export function listFlows(
  sources: readonly { name: string; router: Router; unsignedType?: string }[],
  matched?: ReadonlyArray<{ source: string; flow: string; events: number }>,
): FlowListing[] {
  return FLOWS.map((flow) => {
    const events: Record<string, string[]> = flow.internal
      ? {}
      : Object.fromEntries(sources.map((source) => [source.name, source.router.routedTo(flow)]).filter(([, types]) => types!.length > 0));
    return {
      name: flow.name,
      description: flow.description,
      internal: flow.internal,
      events,
      unsignedTypes: Object.fromEntries(
        sources.filter((source) => source.unsignedType !== undefined && source.name in events).map((source) => [source.name, source.unsignedType!]),
      ),
      decidesFromBody: flow.decidesFromBody,
      replaysByType: sources
        .filter((source) => source.unsignedType !== undefined && source.name in events && source.router.decidesFromBody)
        .map((source) => source.name),
      signals: flow.signals.map(({ name, description, onlyWhileAwaited }) => ({ name, description, onlyWhileAwaited })),
      fields: { copy: Object.keys(flow.fields.copy).filter((name) => !isEntityField(name)), personal: Object.keys(flow.fields.personal ?? {}) },
      tenant: flow.tenant ?? null,
      queries: flow.queries.map((query) => query.name),
      versioning: { ...flow.versioning },
      key: flow.key
        ? {
            key: flow.key.key,
            version: [...flow.key.version],
            order: flow.key.order,
            ...(flow.key.order === 'coalesce' && { quiet: flow.key.quiet, ceiling: flow.key.ceiling }),
          }
        : null,
      waits: flow.waits.map(({ name, type, match, timeout }) => ({ name, type, match, timeout: String(timeout) })),
      ...(matched &&
        !flow.internal && {
          matchedLastHour: Object.fromEntries(
            Object.keys(events).map((source) => [source, matched.find((row) => row.source === source && row.flow === flow.name)?.events ?? 0]),
          ),
        }),
    };
  });
}

export function flowsCommand(): Command {
  return new Command('flows')
    .description(
      "List every flow: the event types each source routes to it (its routes in WEBHOOKS_CONFIG, then its kind's defaults), its signals, fields, queries and worker-build versioning.",
    )
    .addOption(jsonOption('print the list as JSON'))
    .action(async (options: { json?: boolean }) => {
      // Every source the receiver knows, built-in ones whether or not their secret is set here.
      const { sources, databaseUrl } = loadReceiverConfig(process.env, { development: true });
      const listing = listFlows(
        sources.map((source) => {
          const { fields } = createAdapter(source);
          return { name: source.name, router: new Router(source.kind, source.routes), ...(fields.unsigned?.includes('type') && { unsignedType: fields.type }) };
        }),
        databaseUrl ? await matchedLastHour(databaseUrl) : undefined,
      );
      print(options.json, listing, () => listing.map(describe).join('\n\n'));
    });
}

function describe(flow: FlowListing): string {
  const lines = [`${flow.name}${flow.internal ? ' (internal)' : ''}: ${flow.description}`];
  const events = Object.entries(flow.events).map(([source, types]) => {
    const unsigned = flow.unsignedTypes[source];
    const replays = flow.replaysByType.includes(source)
      ? 'every flow of this source decides from the signed body, so the same body as another type is an event of its own'
      : 'the same body as another type is refused as a replay';
    return `${source}: ${types.join(', ')}${unsigned ? ` (type from the ${unsigned}, which the provider does not sign; ${replays})` : ''}`;
  });
  if (!flow.internal) lines.push(`  events   ${events.length ? events.join('\n           ') : "none (route some with a source's routes)"}`);
  for (const signal of flow.signals) lines.push(`  signal   ${signal.name}${signal.onlyWhileAwaited ? ' (only while awaited)' : ''}: ${signal.description}`);
  if (flow.fields.copy.length || flow.fields.personal.length) {
    lines.push(`  fields   ${[...flow.fields.copy, ...flow.fields.personal.map((name) => `${name} (personal: read from the body store)`)].join(', ')}`);
  }
  if (flow.tenant) lines.push(`  tenant   ${flow.tenant} (a drain of held events takes turns by it)`);
  if (flow.key) {
    const { key, order, version, quiet, ceiling } = flow.key;
    const gathers = order === 'coalesce' ? `, a burst gathered until ${quiet} quiet, at most ${ceiling}` : '';
    lines.push(`  key      ${key}, ${order} by ${version.join(', ')}${gathers} (one event of a key at a time: docs/entities.md)`);
  }
  for (const wait of flow.waits) lines.push(`  waits    ${wait.name}: ${wait.type} where ${wait.match}, up to ${wait.timeout}`);
  if (flow.queries.length) lines.push(`  queries  ${flow.queries.join(', ')}`);
  lines.push(`  builds   ${flow.versioning.behavior === 'PINNED' ? 'pinned to the one it started on' : 'moves to the current one'}: ${flow.versioning.why}`);
  const took = Object.entries(flow.matchedLastHour ?? {}).filter(([, events]) => events > 0);
  if (took.length > 0) lines.push(`  took     ${took.map(([source, events]) => `${source}: ${events}`).join(', ')} (events in the last hour)`);
  return lines.join('\n');
}

/** What each flow took over the last hour, from the body store; none when it does not answer (the list is still worth printing). */
async function matchedLastHour(url: string): Promise<Array<{ source: string; flow: string; events: number }> | undefined> {
  try {
    const db = await openDatabase({ url, exitOnIdle: true });
    try {
      return await flowsMatched(db, ROUTE_FLOW.name, 3_600_000);
    } finally {
      await db.close();
    }
  } catch (error) {
    console.error(`(No counts of the last hour: the database did not answer: ${(error as Error).message})`);
    return undefined;
  }
}
