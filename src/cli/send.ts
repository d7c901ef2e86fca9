import { existsSync, readFileSync } from 'node:fs';
import type { ReceiverConfig } from '../config';
import { providerOf } from '../providers/index';
import { createAdapter } from '../providers/registry';
import { isThinType } from '../providers/stripe';
import { ProviderKind } from '../../contracts';

export interface SendOptions {
  source: string;
  /** A built-in fixture's event type, any other event type, or a path to a JSON file. */
  fixtureOrType: string;
  repeat: number;
  url: string;
  eventId?: string;
  /** A Stripe source: send the sample as a thin event notification (`v1.<type>`), as an event destination with thin payloads does. */
  thin?: boolean;
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
  if (sourceConfig.secrets.length === 0 && sourceConfig.publicKeys.length === 0)
    throw new Error(`Source "${options.source}" has no signing secret to sign samples with.`);
  if (options.thin && sourceConfig.kind !== ProviderKind.STRIPE)
    throw new Error(`Only Stripe sends thin events; "${options.source}" is a ${sourceConfig.kind} source.`);
  const sample = samplePayload(sourceConfig.kind, options.fixtureOrType);
  const { payload, builtIn } = sample;
  const type = options.thin && !isThinType(sample.type) ? `v1.${sample.type}` : sample.type;
  const adapter = createAdapter(sourceConfig);
  const id = options.eventId ?? adapter.sampleId();
  // GitHub signs only the body, and the receiver takes a body it stored under another delivery ID
  // for a replay: each built-in GitHub sample carries its delivery ID, so every send is a new event.
  const signedPayload = sourceConfig.kind === ProviderKind.GITHUB && builtIn ? { ...payload, sample_delivery: id } : payload;
  const request = adapter.sign({ id, type, payload: signedPayload, timestamp: new Date() });

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

/** The event to send: a JSON file's as given, or a built-in sample of the type. */
function samplePayload(kind: ProviderKind, fixtureOrType: string): { type: string; payload: Record<string, unknown>; builtIn: boolean } {
  if (fixtureOrType.endsWith('.json') || existsSync(fixtureOrType)) {
    const fixture = JSON.parse(readFileSync(fixtureOrType, 'utf8')) as { type?: unknown; payload?: unknown };
    if (typeof fixture.type !== 'string' || typeof fixture.payload !== 'object' || fixture.payload === null) {
      throw new Error(`${fixtureOrType} must be a JSON object with "type" (string) and "payload" (object).`);
    }
    return { type: fixture.type, payload: fixture.payload as Record<string, unknown>, builtIn: false };
  }
  return { type: fixtureOrType, payload: providerOf(kind).samples[fixtureOrType] ?? { id: `${fixtureOrType.split(/[./]/)[0]}_sample` }, builtIn: true };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
