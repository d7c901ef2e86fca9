import { retryDelayMs } from '../../src/intake/relay';

it('tries a failed start again after 1 s, doubling to at most 10 s, so a backlog drains soon after Temporal returns', () => {
  expect([0, 1, 2, 3, 4, 5, 20].map(retryDelayMs)).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000]);
});
