import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent } from 'undici';
import { UnsafeDestinationError } from '../core/errors';

/**
 * Loopback, private, link-local (cloud metadata 169.254.169.254 included), carrier-grade NAT,
 * unspecified and multicast ranges: never a customer's public endpoint. In IPv6 also the forms that
 * carry an IPv4 address a gateway may turn back into a private one: NAT64 (64:ff9b::/96 and the
 * local-use 64:ff9b:1::/48), 6to4 (2002::/16) and IPv4-compatible (::/96), and the deprecated
 * site-local fec0::/10. (IPv4-mapped ::ffff:0:0/96 is checked against the IPv4 ranges.)
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

export function isBlockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return BLOCKED.check(mapped, 'ipv4');
  const family = isIP(address);
  return family === 4 ? BLOCKED.check(address, 'ipv4') : family === 6 ? BLOCKED.check(address, 'ipv6') : true;
}

/** Parses an endpoint URL: http or https, no credentials in it. */
export function parseEndpointUrl(value: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new UnsafeDestinationError(`"${String(value)}" is not a URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UnsafeDestinationError('Endpoint URLs must be http or https.');
  if (url.username || url.password) throw new UnsafeDestinationError('Endpoint URLs must not carry credentials.');
  return url;
}

/** Resolves the URL's host and refuses it if any address is private, unless private endpoints are allowed. */
export async function checkDestination(value: unknown, { allowPrivate }: { allowPrivate: boolean }): Promise<URL> {
  const url = parseEndpointUrl(value);
  if (allowPrivate) return url;
  const host = hostOf(url);
  for (const address of isIP(host) ? [host] : await resolveAll(host)) refuseBlocked(url, address);
  return url;
}

/**
 * At delivery time: an IP-literal host is checked here, since connecting to it looks nothing up;
 * a hostname is checked by `safeAgent` on every connection.
 */
export function checkLiteralHost(url: URL, { allowPrivate }: { allowPrivate: boolean }): void {
  const host = hostOf(url);
  if (!allowPrivate && isIP(host)) refuseBlocked(url, host);
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

// The messages never say what a name resolved to: that would map an internal network for whoever asks.
function refuseBlocked(url: URL, address: string): void {
  if (isBlockedAddress(address)) {
    throw new UnsafeDestinationError(`${url.hostname} is or resolves to a private or reserved address; set ALLOW_PRIVATE_ENDPOINTS=true to allow it.`);
  }
}

/**
 * An HTTP agent whose connections re-check every resolved address as they are made, so a host that
 * re-resolves to a private address after the endpoint was accepted (DNS rebinding) is refused.
 */
export function safeAgent({ allowPrivate }: { allowPrivate: boolean }): Agent {
  return new Agent({
    connect: {
      lookup(hostname, options, callback) {
        const reply = callback as (error: Error | null, address: string | LookupAddress[], family?: number) => void;
        dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
          if (error) return reply(error, []);
          const blocked = allowPrivate ? undefined : addresses.find((entry) => isBlockedAddress(entry.address));
          if (blocked) return reply(new UnsafeDestinationError(`${hostname} resolves to a private or reserved address.`), []);
          // net.connect asks for every address (happy eyeballs) or for one.
          if ((options as { all?: boolean }).all) return reply(null, addresses);
          reply(null, addresses[0]!.address, addresses[0]!.family);
        });
      },
    },
  });
}

async function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (error, addresses) =>
      error ? reject(new UnsafeDestinationError(`${host} does not resolve: ${error.code}`)) : resolve(addresses.map((entry) => entry.address)),
    ),
  );
}
