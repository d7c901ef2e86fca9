/**
 * The workflow bundle's entry: every flow the worker runs, one file each, exporting its workflow
 * and its declaration (`defineFlow`). A new flow is its file and one line here; everything else
 * (routes, fields, signals, the worker's registration, `durable-webhooks flows`) is derived.
 */
export * from './charge-order';
export * from './fulfil-checkout';
export * from './fulfil-shopify-order';
export * from './notify-github';
export * from './record-checkout-refund';
export * from './record-event';
export * from './subscriptions';
export * from './sync-stripe-customer';
export * from './refresh-stripe-customer';
export * from './route-event';
export * from './entity';
export * from './deliver-message';
export * from './publish-message';
export * from './reconcile';
export * from './backfill';
export * from './build-check';
export * from './bulk-action';
export * from './route-replay';
