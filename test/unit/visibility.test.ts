import { OperationRejectedError } from '../../src/core/errors';
import { visibilityQuery } from '../../src/temporal/visibility';

describe('visibilityQuery', () => {
  it('limits every query to event workflows and ANDs the filters', () => {
    expect(visibilityQuery({ source: 'stripe', type: 'checkout.session.completed', status: 'failed' })).toBe(
      "WebhookSource IS NOT NULL AND WebhookSource = 'stripe' AND WebhookEventType = 'checkout.session.completed' AND ExecutionStatus = 'Failed'",
    );
  });

  it('filters on how events came, and refuses any other value', () => {
    expect(visibilityQuery({ via: 'backfill' })).toBe("WebhookSource IS NOT NULL AND WebhookVia = 'backfill'");
    expect(() => visibilityQuery({ via: "backfill' OR 'x" })).toThrow('"via" must be one of delivery, backfill.');
  });

  it('filters on the tenant and on a failure class, whose steps are joined by " › "', () => {
    expect(visibilityQuery({ tenant: 'shop.myshopify.com', errorClass: 'chargeOrder › CardDeclined' })).toBe(
      "WebhookSource IS NOT NULL AND WebhookTenant = 'shop.myshopify.com' AND WebhookErrorClass = 'chargeOrder › CardDeclined'",
    );
    expect(visibilityQuery({ errorClass: 'CardDeclined' })).toBe("WebhookSource IS NOT NULL AND WebhookErrorClass = 'CardDeclined'");
    expect(() => visibilityQuery({ tenant: "acct_1' OR 'a' = 'a" })).toThrow('"tenant" may hold letters, digits and . _ : @ - only.');
    expect(() => visibilityQuery({ tenant: 'acct 1' })).toThrow(OperationRejectedError);
    expect(() => visibilityQuery({ errorClass: "CardDeclined' OR 'a' = 'a" })).toThrow(
      '"errorClass" may hold letters, digits and . _ : @ - › and spaces only.',
    );
  });

  it.each([
    "WorkflowType = 'chargeOrder' AND ExecutionStatus = 'Failed'",
    "WorkflowId = 'a) OR (b' OR WorkflowId = \"it's (odd\"",
    "(WorkflowType = 'chargeOrder' OR WorkflowType = 'fulfilCheckout') AND StartTime > '2026-01-01T00:00:00Z'",
  ])('keeps the raw query %s inside its parentheses', (query) => {
    expect(visibilityQuery({ query })).toBe(`WebhookSource IS NOT NULL AND (${query})`);
  });

  it.each([
    ["WorkflowType = 'x') OR (WorkflowId != ''", /closes a parenthesis it did not open/],
    ["WorkflowType = 'x' OR (WorkflowId != ''", /leaves a parenthesis open/],
    ['ExecutionStatus = "Running', /unterminated " string/],
    ["WorkflowType = 'x' ORDER BY StartTime", /a condition only/],
    ["WorkflowType = 'x' -- and the rest", /a condition only/],
    ["WorkflowType = 'x' /* note */", /a condition only/],
  ])('refuses a raw query that would escape the event filter: %s', (query, message) => {
    expect(() => visibilityQuery({ query })).toThrow(OperationRejectedError);
    expect(() => visibilityQuery({ query })).toThrow(message);
  });
});
