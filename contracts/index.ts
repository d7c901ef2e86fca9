/**
 * What workflows share with everything else: names, definitions, inputs and results. Loaded into
 * the workflow sandbox, so it imports only @temporalio/workflow, @temporalio/common and itself.
 */
export * from './activities';
export * from './bulk';
export * from './customers';
export * from './email';
export * from './entities';
export * from './event-fields';
export * from './events';
export * from './failures';
export * from './flows';
export * from './messages';
export * from './orders';
export * from './reconcile';
export * from './search-attributes';
export * from './subscriptions';
export * from './waits';
