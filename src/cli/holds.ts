import { Command } from 'commander';
import { loadReceiverConfig } from '../config';
import type { Database } from '../db/database';
import type { Hold } from '../db/holds';
import { HoldOperations } from '../operator/holds';
import { operator, rateOption } from './options';
import { withDatabase } from './database';
import { jsonOption, print } from './output';

/** `durable-webhooks hold`, `release` and `holds`: stop a source's starts while its deliveries keep being accepted. */
export function holdCommands(): Command[] {
  const hold = new Command('hold')
    .description(
      "Hold a source's events (or its types matching --type): deliveries are still verified, stored and answered 2xx, and no workflow starts until `release`.",
    )
    .argument('<source>', 'the source to hold')
    .option('--type <pattern>', 'only these event types: a type, or a prefix ending in * (checkout.*)')
    .option('--reason <text>', 'why, kept with the hold (its audit trail)')
    .addOption(jsonOption('print the hold as JSON'))
    .action(async (source: string, options: { type?: string; reason?: string; json?: boolean }) =>
      withDatabase('hold', async (db) => {
        const created = await holdsOn(db).hold({ source, type: options.type, reason: options.reason }, operator());
        // As JSON, `unknownSource` says it.
        if (created.unknownSource && !options.json) console.error(`Warning: ${created.unknownSource}`);
        print(
          options.json,
          created,
          () =>
            `Held ${describeTarget(created)} as ${created.id}: deliveries are stored and answered, nothing starts; ${created.held} stored event(s) not started yet are held too. Release with: durable-webhooks release ${source}${created.typePattern ? ` --type '${created.typePattern}'` : ''} [--rate 20/s]`,
        );
      }),
    );

  const release = new Command('release')
    .description(
      "Release a source's holds (or only the one of --type): the held events start, oldest first with tenants taking turns, at --rate across every receiver and worker.",
    )
    .argument('<source-or-hold-id>', 'the source whose holds to release, or one hold ID (hold_…)')
    .option('--type <pattern>', 'only the hold of exactly this pattern')
    .option(
      '--rate <n/s>',
      "at most this many starts per second, cluster-wide (20/s, 600/m); else at once (or at the source's standing rate)",
      rateOption('--rate'),
    )
    .addOption(jsonOption('print the released holds as JSON'))
    .action(async (target: string, options: { type?: string; rate?: number; json?: boolean }) =>
      withDatabase('release', async (db) => {
        const which = target.startsWith('hold_') ? { id: target } : { source: target, type: options.type };
        const result = await holdsOn(db).release(which, { rate: options.rate }, operator());
        print(options.json, result, () =>
          [
            ...result.released.map((each) => `Released ${each.id} (${describeTarget(each)}).`),
            `${result.due} held event(s) due now${options.rate ? `, at most ${options.rate} a second across the cluster` : ''}; the sweepers (any receiver or worker) start them. durable-webhooks status shows what still waits.`,
          ].join('\n'),
        );
      }),
    );

  const holds = new Command('holds')
    .description('List the active holds, with how many events each holds now; --all adds the released ones (who held and released, when, why).')
    .option('--all', 'the released holds too')
    .addOption(jsonOption('print the holds as JSON'))
    .action(async (options: { all?: boolean; json?: boolean }) =>
      withDatabase('holds', async (db) => {
        const found = await holdsOn(db).list({ all: options.all });
        print(options.json, { holds: found }, () => (found.length === 0 ? 'No holds.' : found.map(describeHold).join('\n')));
      }),
    );
  return [hold, release, holds];
}

/** The holds' operations on the database, over the sources this shell's WEBHOOKS_CONFIG and secrets give: perhaps not all the receiver's. */
function holdsOn(db: Database): HoldOperations {
  return new HoldOperations(
    db,
    loadReceiverConfig().sources.map((source) => source.name),
    false,
  );
}

function describeTarget(hold: Pick<Hold, 'source' | 'typePattern'>): string {
  return hold.typePattern ? `${hold.source} ${hold.typePattern}` : `every event of ${hold.source}`;
}

/** One line per hold: what, how many wait, who and why; a released one says when, by whom and at what rate. */
export function describeHold(hold: Hold): string {
  const state = hold.releasedAt
    ? `released ${hold.releasedAt} by ${hold.releasedBy}${hold.releaseRate ? ` at ${hold.releaseRate}/s` : ''}`
    : `holding ${hold.held} event(s)`;
  return `${hold.id}  ${describeTarget(hold)}: ${state}; held ${hold.createdAt} by ${hold.createdBy}${hold.reason ? `: ${hold.reason}` : ''}`;
}
