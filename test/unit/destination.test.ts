import { UnsafeDestinationError } from '../../src/core/errors';
import { checkDestination, isBlockedAddress } from '../../src/outbound/destination';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a00:1',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    '::127.0.0.1',
    '::7f00:1',
    'fec0::1',
    'feff::1',
  ])('blocks %s', (address) => expect(isBlockedAddress(address)).toBe(true));

  it.each(['8.8.8.8', '172.32.0.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) =>
    expect(isBlockedAddress(address)).toBe(false),
  );
});

describe('checkDestination', () => {
  it.each(['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/hook', 'http://10.0.0.5/hook'])(
    'refuses %s when private endpoints are not allowed',
    async (url) => {
      await expect(checkDestination(url, { allowPrivate: false })).rejects.toThrow(UnsafeDestinationError);
      await expect(checkDestination(url, { allowPrivate: false })).rejects.toThrow(/private or reserved address; set ALLOW_PRIVATE_ENDPOINTS=true/);
    },
  );

  it.each(['http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'http://[2002:a00:1::1]/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://[fec0::1]/hook'])(
    'refuses the IPv6 form %s of a private IPv4 address',
    async (url) => {
      await expect(checkDestination(url, { allowPrivate: false })).rejects.toThrow(UnsafeDestinationError);
    },
  );

  it('never says what a name resolved to', async () => {
    const error = await checkDestination('http://localhost:8080/hook', { allowPrivate: false }).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(UnsafeDestinationError);
    expect((error as Error).message).toBe('localhost is or resolves to a private or reserved address; set ALLOW_PRIVATE_ENDPOINTS=true to allow it.');
    expect((error as Error).message).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('allows them with ALLOW_PRIVATE_ENDPOINTS, and allows a public address either way', async () => {
    expect((await checkDestination('http://127.0.0.1:8080/hook', { allowPrivate: true })).port).toBe('8080');
    expect((await checkDestination('https://93.184.216.34/hook', { allowPrivate: false })).hostname).toBe('93.184.216.34');
  });
});
