import Stripe from 'stripe';

/** The real SDK; STRIPE_API_URL points it at another base URL. Temporal does the retrying. */
export function createStripeClient(secretKey: string, apiUrl?: string): Stripe {
  const url = apiUrl ? new URL(apiUrl) : undefined;
  return new Stripe(secretKey, {
    maxNetworkRetries: 0,
    timeout: 10_000,
    ...(url && {
      protocol: url.protocol === 'http:' ? 'http' : 'https',
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'http:' ? 80 : 443)),
    }),
  });
}
