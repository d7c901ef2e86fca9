/**
 * Every provider kind's file: a new kind is its file (src/providers/<kind>.ts, with its
 * `defineProvider`), its samples in ./fixtures/, and one line here.
 */
export * from './stripe';
export * from './github';
export * from './standard-webhooks';
export * from './shopify';
export * from './paddle';
export * from './square';
export * from './slack';
export * from './linear';
export * from './twilio';
export * from './sendgrid';
export * from './adyen';
export * from './hmac';
