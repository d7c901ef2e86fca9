import { describeError, errorLine, MASK, maskPersonal, withoutAddresses, withoutInternalAddresses } from '../../src/core/redact';

describe('what an error may say in a log line', () => {
  const smtp = Object.assign(new Error("Can't send mail - all recipients were rejected: 550 5.1.1 <ada@example.com>: Recipient address rejected"), {
    code: 'EENVELOPE',
    response: '550 5.1.1 <ada@example.com>',
    rejected: ['ada@example.com'],
  });

  it('keeps the name, the code and the message, with every address replaced, and nothing else of the object', () => {
    expect(describeError(smtp)).toEqual({
      type: 'Error',
      code: 'EENVELOPE',
      message: "Can't send mail - all recipients were rejected: 550 5.1.1 <<address>>: Recipient address rejected",
    });
    expect(errorLine(smtp)).toBe("Error: Can't send mail - all recipients were rejected: 550 5.1.1 <<address>>: Recipient address rejected");
    expect(errorLine('refused for "bob@example.org"')).toBe('refused for "<address>"');
    expect(withoutAddresses('no address here: 127.0.0.1:5432')).toBe('no address here: 127.0.0.1:5432');
  });
});

describe('maskPersonal', () => {
  it('masks values under keys that name a person and email addresses anywhere, and keeps the rest and the shape', () => {
    const body = {
      id: 'evt_1',
      amount_total: 4200,
      livemode: false,
      customer_details: {
        email: 'ada@example.com',
        name: 'Ada Lovelace',
        phone: '+44 20 7946 0000',
        address: { line1: '12 St James', postal_code: 'SW1', city: 'London', country: 'GB' },
      },
      note: 'reply to grace@example.com please',
      items: [{ billing_name: 'Grace', quantity: 2 }],
    };
    expect(maskPersonal(body)).toEqual({
      id: 'evt_1',
      amount_total: 4200,
      livemode: false,
      customer_details: { email: MASK, name: MASK, phone: MASK, address: { line1: MASK, postal_code: MASK, city: MASK, country: MASK } },
      note: `reply to ${MASK} please`,
      items: [{ billing_name: MASK, quantity: 2 }],
    });
  });
});

describe('withoutInternalAddresses', () => {
  it('replaces hosts with ports and IPv4 addresses, and leaves a timestamp alone', () => {
    expect(
      withoutInternalAddresses('connect ECONNREFUSED 10.20.30.40:7233 (temporal-frontend.temporal.svc:7233) at 2026-12-06T01:25:27Z via [fd00::1]:7233'),
    ).toBe('connect ECONNREFUSED <address> (<address>) at 2026-12-06T01:25:27Z via <address>');
  });
});
