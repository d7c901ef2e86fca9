import type { ProviderKind } from '../../contracts';
import { adyenProvider } from './adyen';
import type { ProviderDefinition } from './define';
import { githubProvider } from './github';
import { hmacProvider } from './hmac';
import { linearProvider } from './linear';
import { paddleProvider } from './paddle';
import { sendgridProvider } from './sendgrid';
import { shopifyProvider } from './shopify';
import { slackProvider } from './slack';
import { squareProvider } from './square';
import { standardWebhooksProvider, svixProvider } from './standard-webhooks';
import { stripeProvider } from './stripe';
import { twilioProvider } from './twilio';

/**
 * Every provider kind the receiver verifies, one declaration each (`defineProvider`, in its own
 * file): a new kind is its file, its fixtures and one line here. The registry, the built-in sources,
 * the development secrets, `send`'s samples and `durable-webhooks providers` derive from this list.
 */
export const PROVIDERS: readonly ProviderDefinition[] = [
  stripeProvider,
  githubProvider,
  standardWebhooksProvider,
  svixProvider,
  shopifyProvider,
  paddleProvider,
  squareProvider,
  slackProvider,
  linearProvider,
  twilioProvider,
  sendgridProvider,
  adyenProvider,
  hmacProvider,
];

const byKind: ReadonlyMap<string, ProviderDefinition> = new Map(PROVIDERS.map((provider) => [provider.kind, provider]));

/** The declaration of a kind; every value of `ProviderKind` has one (a test holds the two lists equal). */
export function providerOf(kind: ProviderKind): ProviderDefinition {
  const provider = byKind.get(kind);
  if (!provider) throw new Error(`No provider declares the kind "${kind}"; add it to src/providers/index.ts.`);
  return provider;
}
