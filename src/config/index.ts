/**
 * One typed configuration per process, from shared parts, a file for each: what every process reads
 * (./common.ts), the receiver's edge (./receiver.ts), its sources (./sources.ts) and tokens
 * (./tokens.ts), the worker's downstream APIs (./worker.ts). Variables are read by ./env.ts; the
 * worker reads WEBHOOKS_CONFIG only for a backfill into one of its Stripe sources.
 */
export * from './common';
export * from './receiver';
export * from './tokens';
export * from './worker';
