import { describeError, errorLine, withoutAddresses } from '../../src/redact';

describe('what an error may say in a log line', () => {
  const smtp = Object.assign(new Error("Can't send mail - all recipients were rejected: 550 5.1.1 <ada@example.com>: Recipient address rejected"), {
    code: 'EENVELOPE',
    response: '550 5.1.1 <ada@example.com>',
    rejected: ['ada@example.com'],
  });

  it('keeps the name, the code and the message, with every address replaced, and nothing else of the object', () => {
    expect(describeError(smtp)).toEqual({ type: 'Error', code: 'EENVELOPE', message: "Can't send mail - all recipients were rejected: 550 5.1.1 <<address>>: Recipient address rejected" });
    expect(errorLine(smtp)).toBe("Error: Can't send mail - all recipients were rejected: 550 5.1.1 <<address>>: Recipient address rejected");
    expect(errorLine('refused for "bob@example.org"')).toBe('refused for "<address>"');
    expect(withoutAddresses('no address here: 127.0.0.1:5432')).toBe('no address here: 127.0.0.1:5432');
  });
});
