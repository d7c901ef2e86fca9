import { defineFlow, type BodyField, type EventOutcome, type WebhookEvent } from '../contracts';
import { dbActivity, sendEmail } from './activities';
import { finish, handleEvent, idempotencyKey, stepOf } from './event-frame';

export const notifyGitHubFlow = defineFlow({
  workflow: notifyGitHub,
  description: 'Emails NOTIFY_EMAIL about a new issue, or that the webhook is connected.',
  handles: { github: ['issues.opened', 'ping'] },
  versioning: {
    behavior: 'AUTO_UPGRADE',
    why: 'One email, whose retries (up to 23 hours) can outlast a rolling deploy; pinned, it would wait for a build that is gone.',
  },
  // The GitHub App installation the event is for (absent for a repository's own webhook).
  tenant: '/installation/id',
});

/** A field of the GitHub body: the email activity fills it in, so issue titles and logins never enter Temporal. */
const body = (pointer: string, otherwise?: string): BodyField => ({ fromBody: pointer, otherwise });
const repo = body('/repository/full_name', 'GitHub');

/** GitHub `issues.opened` and `ping`: one notification email to NOTIFY_EMAIL. */
export async function notifyGitHub(event: WebhookEvent): Promise<EventOutcome> {
  return handleEvent(event, async (progress) => {
    const { notifyEmail } = await dbActivity.flowSettings();
    if (!notifyEmail) return finish(event, progress, 'ignored', { status: 'ignored', detail: { reason: 'NOTIFY_EMAIL is not set' } });
    const { subject, text } =
      event.type === 'ping'
        ? { subject: ['[', repo, '] webhook ', body('/hook_id'), ' connected'], text: ['GitHub says: ', body('/zen', 'ping')] }
        : {
            subject: ['[', repo, '] Issue #', body('/issue/number'), ' opened: ', body('/issue/title')],
            text: [body('/issue/user/login', 'Someone'), ' opened ', body('/issue/html_url'), '.'],
          };
    await sendEmail({ ...stepOf(event, 'email:notification'), idempotencyKey: idempotencyKey(), to: notifyEmail, subject, text });
    progress.done('email:notification');
    return finish(event, progress, 'notified', { status: 'completed', detail: { notified: notifyEmail } });
  });
}
