import { ProviderKind } from '../../contracts';
import { bodyText } from './github';
import { parseJsonObject } from './json';
import { formParams } from './twilio';

/**
 * The payload of a stored event, as its adapter read it on receipt: GitHub's form-encoded bodies
 * and Twilio's forms as objects, and an Adyen item out of the one-item delivery it is stored as.
 */
export function parseStoredBody(body: { provider: ProviderKind; contentType: string | null; source: string }, raw: Buffer): Record<string, unknown> {
  switch (body.provider) {
    case ProviderKind.GITHUB:
      return parseJsonObject(bodyText(raw, body.source), body.source);
    case ProviderKind.TWILIO:
      return formParams(raw, body.source);
    case ProviderKind.ADYEN: {
      const [entry] = (parseJsonObject(raw.toString('utf8'), body.source).notificationItems ?? []) as Array<{
        NotificationRequestItem?: Record<string, unknown>;
      }>;
      return entry?.NotificationRequestItem ?? {};
    }
    default:
      return parseJsonObject(raw.toString('utf8'), body.source);
  }
}
