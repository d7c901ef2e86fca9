import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { ReceiverConfig } from '../config';
import { createAdapter } from '../providers/registry';
import { ProviderKind } from '../../contracts';
import githubIssuesOpened from './fixtures/github.issues.opened.json';
import standardOrderCreated from './fixtures/standard.order.created.json';
import stripeCheckoutCompleted from './fixtures/stripe.checkout.session.completed.json';

/** Built-in sample payloads by provider kind and event type. */
const FIXTURES: Record<ProviderKind, Record<string, Record<string, unknown>>> = {
  [ProviderKind.STRIPE]: { 'checkout.session.completed': stripeCheckoutCompleted },
  [ProviderKind.GITHUB]: { 'issues.opened': githubIssuesOpened },
  [ProviderKind.STANDARD_WEBHOOKS]: { 'order.created': standardOrderCreated },
};

/** Event IDs in each provider's own shape. */
const NEW_EVENT_ID: Record<ProviderKind, () => string> = {
  [ProviderKind.STRIPE]: () => `evt_${randomBytes(12).toString('hex')}`,
  [ProviderKind.GITHUB]: () => randomUUID(),
  [ProviderKind.STANDARD_WEBHOOKS]: () => `msg_${randomBytes(12).toString('hex')}`,
};

export interface SendOptions {
  source: string;
  /** A built-in fixture's event type, any other event type, or a path to a JSON file. */
  fixtureOrType: string;
  repeat: number;
  url: string;
  eventId?: string;
}

export interface SendAttempt {
  status: number;
  body: unknown;
}

/** Signs one sample event as the source's provider would and posts it `repeat` times, unchanged. */
export async function send(config: ReceiverConfig, options: SendOptions, onAttempt: (attempt: SendAttempt, index: number) => void): Promise<SendAttempt[]> {
  const sourceConfig = config.sources.find((source) => source.name === options.source);
  if (!sourceConfig) {
    throw new Error(`No source named "${options.source}"; configured: ${config.sources.map((source) => source.name).join(', ')}.`);
  }
  if (sourceConfig.secrets.length === 0) throw new Error(`Source "${options.source}" has no signing secret to sign samples with.`);
  const { type, payload } = samplePayload(sourceConfig.kind, options.fixtureOrType);
  const request = createAdapter(sourceConfig).sign({
    id: options.eventId ?? NEW_EVENT_ID[sourceConfig.kind](),
    type,
    payload,
    timestamp: new Date(),
  });

  const endpoint = `${options.url.replace(/\/$/, '')}/webhooks/${encodeURIComponent(options.source)}`;
  const attempts: SendAttempt[] = [];
  for (let index = 0; index < options.repeat; index++) {
    const response = await fetch(endpoint, { method: 'POST', headers: request.headers, body: request.body });
    const text = await response.text();
    const attempt = { status: response.status, body: parseOrText(text) };
    attempts.push(attempt);
    onAttempt(attempt, index);
  }
  return attempts;
}

function samplePayload(kind: ProviderKind, fixtureOrType: string): { type: string; payload: Record<string, unknown> } {
  if (fixtureOrType.endsWith('.json') || existsSync(fixtureOrType)) {
    const fixture = JSON.parse(readFileSync(fixtureOrType, 'utf8')) as { type?: unknown; payload?: unknown };
    if (typeof fixture.type !== 'string' || typeof fixture.payload !== 'object' || fixture.payload === null) {
      throw new Error(`${fixtureOrType} must be a JSON object with "type" (string) and "payload" (object).`);
    }
    return { type: fixture.type, payload: fixture.payload as Record<string, unknown> };
  }
  return { type: fixtureOrType, payload: FIXTURES[kind][fixtureOrType] ?? { id: `${fixtureOrType.split('.')[0]}_sample` } };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
