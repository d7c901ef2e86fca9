import { millisecondsOf, pointInTime } from '../../src/core/duration';
import { OperationRejectedError } from '../../src/core/errors';

const now = new Date('2026-12-06T12:00:00.000Z');

describe('the one duration reader', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['7d', 604_800_000],
    ['1.5h', 5_400_000],
  ])('reads %s as Temporal does', (text, expected) => {
    expect(millisecondsOf(text)).toBe(expected);
  });

  it('gives NaN for what is not a duration', () => {
    expect(millisecondsOf('soon')).toBeNaN();
  });
});

describe("an operator's point in time (since, until)", () => {
  it.each([
    ['30m', '2026-12-06T11:30:00.000Z'],
    ['72h', '2026-12-03T12:00:00.000Z'],
    ['3d', '2026-12-03T12:00:00.000Z'],
    ['90s', '2026-12-06T11:58:30.000Z'],
    ['2026-12-01T00:00:00Z', '2026-12-01T00:00:00.000Z'],
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
  ])('reads %s as a duration back from now or an ISO time', (text, expected) => {
    expect(pointInTime(text, 'since', now).toISOString()).toBe(expected);
  });

  it.each(['yesterday', '30', '-5m', ''])('refuses %j, naming the field', (text) => {
    expect(() => pointInTime(text, 'until', now)).toThrow(OperationRejectedError);
    expect(() => pointInTime(text, 'until', now)).toThrow(/"until" must be a duration \(30m, 2h, 3d\) or an ISO 8601 time/);
  });
});
