import type { EventOutcome, WebhookEvent } from '../contracts';
import { db, finish, handleEvent, idempotencyKey, sendEmail, stepOf } from './steps';

interface GitHubPayload {
  repository?: { full_name?: string };
  issue?: { number?: number; title?: string; html_url?: string; user?: { login?: string } };
  zen?: string;
  hook_id?: number;
}

/** GitHub `issues.opened` and `ping`: one notification email to NOTIFY_EMAIL. */
export async function notifyGitHub(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const { notifyEmail } = await db.flowSettings();
    if (!notifyEmail) return finish(event, progress, 'ignored', { status: 'ignored', detail: { reason: 'NOTIFY_EMAIL is not set' } });
    const payload = event.payload as GitHubPayload;
    const repo = payload.repository?.full_name ?? 'GitHub';
    const { subject, text } =
      event.type === 'ping'
        ? { subject: `[${repo}] webhook ${payload.hook_id ?? ''} connected`.replace('  ', ' '), text: `GitHub says: ${payload.zen ?? 'ping'}` }
        : {
            subject: `[${repo}] Issue #${payload.issue?.number} opened: ${payload.issue?.title}`,
            text: `${payload.issue?.user?.login ?? 'Someone'} opened ${payload.issue?.html_url ?? `issue #${payload.issue?.number}`}.`,
          };
    await sendEmail({ ...stepOf(event, 'email:notification'), idempotencyKey: idempotencyKey(), to: notifyEmail, subject, text });
    progress.stepsDone.push('email:notification');
    return finish(event, progress, 'notified', { status: 'completed', detail: { notified: notifyEmail } });
  });
}
