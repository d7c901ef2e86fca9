import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { AddressAllowlist } from '../config';
import type { Logger } from '../core/logger';
import { errorLine } from '../core/redact';

/** How long one read of a published list may take. */
const READ_TIMEOUT_MS = 10_000;

/** Where a delivery's client address stands against its source's list; `unknown` while no list was ever read. */
export type AddressVerdict = 'inside' | 'outside' | 'unknown';

/**
 * The published address lists of the sources that keep to them (ADDRESS_ALLOWLISTS): each read at
 * start and every `refreshMs` from its provider (GitHub's meta API `hooks`, Stripe's webhook IPs),
 * matched with Node's `BlockList`. A read that fails keeps the last good list, logged; a source whose
 * list was never read answers `unknown`.
 */
export class AddressAllowlists {
  private readonly lists = new Map<string, BlockList>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly allowlists: readonly AddressAllowlist[],
    private readonly options: { refreshMs: number; logger: Logger },
  ) {}

  /** The source's mode, if it has a list. */
  modeOf(source: string): AddressAllowlist['mode'] | undefined {
    return this.allowlists.find((allowlist) => allowlist.source === source)?.mode;
  }

  /** Where this client address stands for the source. */
  verdict(source: string, address: string | undefined): AddressVerdict {
    const list = this.lists.get(source);
    if (!list) return 'unknown';
    const ip = address?.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    if (ip === undefined) return 'outside';
    if (isIPv4(ip)) return list.check(ip, 'ipv4') ? 'inside' : 'outside';
    return isIPv6(ip) && list.check(ip, 'ipv6') ? 'inside' : 'outside';
  }

  /** Reads every list now, then again every `refreshMs`. */
  async start(): Promise<void> {
    if (this.allowlists.length === 0) return;
    await this.refresh();
    const again = () => {
      this.timer = setTimeout(() => void this.refresh().finally(again), this.options.refreshMs).unref();
    };
    again();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** One read of each list; a list that cannot be read, or reads as empty, leaves the last good one in place. */
  async refresh(): Promise<void> {
    await Promise.all(
      this.allowlists.map(async ({ source, url, read }) => {
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS), headers: { accept: 'application/json' } });
          if (!response.ok) throw new Error(`${url} answered ${response.status}`);
          const list = blockListOf(read(await response.json()));
          if (list.size === 0) throw new Error(`${url} lists no address`);
          this.lists.set(source, list.blocks);
        } catch (error) {
          this.options.logger.warn(
            { source, url, error: errorLine(error), kept: this.lists.has(source) },
            'the published address list could not be read; the last good one stays',
          );
        }
      }),
    );
  }
}

/** Addresses and ranges (`192.30.252.0/22`, `2a0a:a440::/29`, `3.18.12.63`) as a BlockList; what is neither is skipped. */
function blockListOf(entries: readonly string[]): { blocks: BlockList; size: number } {
  const blocks = new BlockList();
  let size = 0;
  for (const entry of entries) {
    const [address, prefix] = entry.trim().split('/');
    const type = address && isIPv4(address) ? 'ipv4' : address && isIPv6(address) ? 'ipv6' : undefined;
    if (!type) continue;
    if (prefix === undefined) blocks.addAddress(address!, type);
    else if (/^\d{1,3}$/.test(prefix)) blocks.addSubnet(address!, Number(prefix), type);
    else continue;
    size++;
  }
  return { blocks, size };
}
