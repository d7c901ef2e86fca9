import { checkDestination, isBlockedAddress, UnsafeDestinationError } from '../../src/outbound/destination';

describe('isBlockedAddress', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1'])(
    'blocks %s',
    (address) => expect(isBlockedAddress(address)).toBe(true),
  );

  it.each(['8.8.8.8', '172.32.0.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => expect(isBlockedAddress(address)).toBe(false));
});

describe('checkDestination', () => {
  it.each(['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/hook', 'http://10.0.0.5/hook'])(
    'refuses %s when private endpoints are not allowed',
    async (url) => {
      await expect(checkDestination(url, { allowPrivate: false })).rejects.toThrow(UnsafeDestinationError);
      await expect(checkDestination(url, { allowPrivate: false })).rejects.toThrow(/private or reserved address; set ALLOW_PRIVATE_ENDPOINTS=true/);
    },
  );

  it('allows them with ALLOW_PRIVATE_ENDPOINTS, and allows a public address either way', async () => {
    expect((await checkDestination('http://127.0.0.1:8080/hook', { allowPrivate: true })).port).toBe('8080');
    expect((await checkDestination('https://93.184.216.34/hook', { allowPrivate: false })).hostname).toBe('93.184.216.34');
  });
});
