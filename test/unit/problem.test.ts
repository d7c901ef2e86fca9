import { BatchItemsRefusedError, EventIdConflictError, TemporalUnavailableError, UnsupportedContentEncodingError } from '../../src/core/delivery-errors';
import { OperationRejectedError, problem, ProblemError } from '../../src/core/errors';
import { toProblem } from '../../src/http/problem';

describe('an error declared with problem(…)', () => {
  it('carries its status, slug and title, its message as given, and no context', () => {
    const error = new OperationRejectedError('"until" is before "since".');
    expect(error).toBeInstanceOf(ProblemError);
    expect(error).toMatchObject({
      name: 'OperationRejectedError',
      status: 400,
      slug: 'operation-rejected',
      title: 'Operation rejected',
      message: '"until" is before "since".',
    });
    expect(toProblem(error, 'fallback')).toEqual({
      type: 'urn:durable-webhooks:problem:operation-rejected',
      title: 'Operation rejected',
      status: 400,
      detail: '"until" is before "since".',
    });
  });

  it('makes its message from its context, sets the context on the error and shows only the members it names', () => {
    class SecretLeakError extends problem(418, 'leak', 'Leak', ['source'], ({ source }: { source: string; secret: string }) => `Source ${source} leaked.`) {}
    const error = new SecretLeakError({ source: 'stripe', secret: 'whsec_x' });
    expect(error).toMatchObject({ source: 'stripe', secret: 'whsec_x', message: 'Source stripe leaked.' });
    expect(toProblem(error, 'fallback')).toEqual({
      type: 'urn:durable-webhooks:problem:leak',
      title: 'Leak',
      status: 418,
      detail: 'Source stripe leaked.',
      source: 'stripe',
    });
  });

  it('keeps its cause, and its base class', () => {
    const cause = new Error('14 UNAVAILABLE');
    const error = new TemporalUnavailableError({ eventId: 'evt_1' }, { cause });
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('Temporal could not be reached in time; the event was not recorded. Retry the delivery.');
    expect(toProblem(error, 'fallback')).toMatchObject({ status: 503, eventId: 'evt_1' });
    expect(toProblem(new EventIdConflictError({ source: 'a', eventId: 'evt_2', otherSource: 'b' }), 'fallback')).toMatchObject({
      status: 409,
      source: 'a',
      eventId: 'evt_2',
      otherSource: 'b',
    });
  });
});

describe('a problem document made from the context by a function', () => {
  it('bounds a batch refusal to the first refused items by index, and counts them all', () => {
    const refused = Array.from({ length: 25 }, (_, index) => ({ index: 24 - index, reason: 'bad signature' }));
    const error = new BatchItemsRefusedError({ source: 'sendgrid', recorded: [], refused });
    expect(error.message).toMatch(/^25 item\(s\) of the batch were refused \(see "refused", the first 20\)/);
    expect(toProblem(error, 'fallback')).toMatchObject({ source: 'sendgrid', recorded: [], refusedCount: 25, refused: refused.slice(5).reverse() });
  });

  it('shows a constant the caller does not pass', () => {
    expect(toProblem(new UnsupportedContentEncodingError({ contentEncoding: 'gzip' }), 'fallback')).toMatchObject({ status: 415, accepted: ['identity'] });
  });
});
