/** The workflow bundle's entry: every workflow the worker runs, one file each. */
export { chargeOrder } from './charge-order';
export { fulfilCheckout } from './fulfil-checkout';
export { fulfilShopifyOrder } from './fulfil-shopify-order';
export { notifyGitHub } from './notify-github';
export { recordEvent } from './record-event';
export { applySubscriptionEvent, subscriptionEntity } from './subscriptions';
export { deliverMessage } from './deliver-message';
export { publishMessage } from './publish-message';
export { reconcile } from './reconcile';
