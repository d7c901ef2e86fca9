import {
  eventWorkflowId,
  MAX_FIELD_LENGTH,
  WEBHOOK_EVENT_TYPE,
  WEBHOOK_SOURCE,
  WEBHOOK_TENANT,
  WEBHOOK_VIA,
  type EventFlow,
  type EventVia,
  type RoutedFlow,
  type RoutedFlows,
  type WebhookEvent,
} from '../../contracts';
import { DEFAULT_FLOW, ROUTE_FLOW, type RouteDecision } from '../flows';
import type { Skipped, StartSpec } from '../db/event-bodies';
import type { ReceivedEvent, StartTarget } from './port';

/** How long a delivery waits for Temporal before the receiver answers 503. */
export const DEFAULT_START_TIMEOUT_MS = 5_000;

/**
 * How long the process that stored a body has to start its workflow before a sweeper may: longer
 * than a start waits for Temporal, so a sweeper takes only what that process did not do.
 */
export const START_LEASE_MS = 2 * DEFAULT_START_TIMEOUT_MS;

/**
 * How an event's workflow is started: its flow, what the inbox keeps to start it (`spec`), and the
 * options `client.workflow.start` gets; `skipped` when nothing starts: its source's routes say
 * `ignore` for its type, or the route's filters took it for no flow (`filtered`). A route with
 * subscribers starts `routeEvent`, its input naming the flows the filters chose. `npm run bench`
 * starts the same raw.
 */
export function startOptions(event: Omit<ReceivedEvent, 'body'>, { workflowIdPrefix, router }: StartTarget, via: EventVia, taskQueue: string) {
  const decision = router.decide(event, event.payload);
  const flow = 'flow' in decision ? decision.flow : 'ignore' in decision ? DEFAULT_FLOW : ROUTE_FLOW;
  const input = workflowInput(event, flow, router.decidesFromBody);
  if ('subscribers' in decision) input.routes = routedFlows(event, decision);
  const tenant = flow.readTenant(event.payload);
  const spec: StartSpec = { flow: flow.name, input, summary: summaryOf(event, flow.summarize(input.fields!)), ...(tenant !== undefined && { tenant }) };
  const skipped: Skipped | undefined =
    'ignore' in decision ? 'ignored' : 'subscribers' in decision && decision.subscribers.length + decision.failures.length === 0 ? 'filtered' : undefined;
  return { flow, spec, skipped, options: workflowStartOptions(eventWorkflowId(workflowIdPrefix, event.id), spec, via, taskQueue) };
}

/** The flows the filters chose, each with its own fields, summary and tenant, for `routeEvent` to start. */
function routedFlows(event: Omit<ReceivedEvent, 'body'>, decision: Extract<RouteDecision, { subscribers: unknown }>): RoutedFlows {
  return { flows: decision.subscribers.map((flow) => routedFlow(event, flow, event.payload)), filtered: decision.filtered, failures: decision.failures };
}

/** One flow a route chose for an event: the fields it copies from the body, its summary line and its tenant. */
export function routedFlow(event: Pick<ReceivedEvent, 'source' | 'type' | 'subject'>, flow: EventFlow, body: unknown): RoutedFlow {
  const fields = flow.readFields(body);
  const tenant = flow.readTenant(body);
  return {
    flow: flow.name,
    fields,
    summary: summaryOf(event, [flow.name, flow.summarize(fields)].filter(Boolean).join(' · ')),
    ...(tenant !== undefined && { tenant }),
  };
}

/**
 * The options of every start of an event workflow, by the receiver or from the inbox: its ID, input,
 * dedupe policies, search attributes and summary.
 */
export function workflowStartOptions(workflowId: string, spec: StartSpec, via: EventVia, taskQueue: string) {
  return {
    workflowId,
    taskQueue,
    args: [spec.input] as [WebhookEvent],
    // A closed run with this ID blocks a new one, and so does a running one: the engine is the dedupe.
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    workflowIdConflictPolicy: 'FAIL' as const,
    typedSearchAttributes: [
      { key: WEBHOOK_SOURCE, value: spec.input.source },
      { key: WEBHOOK_EVENT_TYPE, value: spec.input.type },
      { key: WEBHOOK_VIA, value: via },
      ...(spec.tenant !== undefined ? [{ key: WEBHOOK_TENANT, value: spec.tenant }] : []),
    ],
    staticSummary: spec.summary,
    // Where the cluster enables task queue fairness (docs/operating.md#bulk-days), one tenant's backlog of tasks does not delay another's.
    ...(spec.tenant !== undefined && { priority: { fairnessKey: spec.tenant } }),
  };
}

/** The workflow's input: the event's identity and the fields its flow copies, without the body. */
function workflowInput(event: Omit<ReceivedEvent, 'body'>, flow: EventFlow, decidesFromBody: boolean): WebhookEvent {
  const { source, provider, id, type, occurredAt, receivedAt, subject, bodySha256 } = event;
  // A source whose flows all decide from the signed body may take the same bytes under another unsigned type.
  const replayScope = bodySha256 !== undefined && decidesFromBody ? type : undefined;
  return {
    source,
    provider,
    id,
    type,
    occurredAt,
    receivedAt,
    ...(subject !== undefined && subject.length <= MAX_FIELD_LENGTH && { subject }),
    ...(bodySha256 !== undefined && { bodySha256 }),
    ...(replayScope !== undefined && { replayScope }),
    fields: flow.readFields(event.payload),
  };
}

/** Temporal refuses a static summary over 200 bytes. */
export const MAX_SUMMARY_BYTES = 200;

/**
 * One line a person can read in the Temporal UI's workflow list: `stripe · checkout.session.completed · cs_… · 42.00 EUR`,
 * the last part the flow's own (`FlowDeclaration.summary`), cut to Temporal's 200 bytes on a character boundary.
 */
export function summaryOf(event: Pick<ReceivedEvent, 'source' | 'type' | 'subject'>, flowPart?: string): string {
  const summary = [event.source, event.type, event.subject, flowPart].filter(Boolean).join(' · ');
  if (Buffer.byteLength(summary) <= MAX_SUMMARY_BYTES) return summary;
  let cut = '';
  for (const character of summary) {
    if (Buffer.byteLength(cut + character + '…') > MAX_SUMMARY_BYTES) break;
    cut += character;
  }
  return cut + '…';
}
