/**
 * The part of `@linear/sdk/webhooks` the Linear adapter uses. The package ships its types only as
 * `.d.mts`, which this CommonJS project's module resolution does not read, and a tsconfig `paths`
 * entry would also send tsx to that file at run time.
 */
declare module '@linear/sdk/webhooks' {
  export class LinearWebhookClient {
    constructor(secret: string);
    /** Throws "Invalid webhook signature", or (the signature matched) an error about the timestamp. */
    verify(rawBody: Buffer, signature: string, timestamp?: number | null): boolean;
  }
}
