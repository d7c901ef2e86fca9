import examples from '@octokit/webhooks-examples';
import { MalformedEventError, SignatureVerificationError } from '../../../src/core/delivery-errors';
import { loadReceiverConfig } from '../../../src/config';
import { createGitHubAdapter } from '../../../src/providers/github';
import { githubHeaders, SECRETS } from '../../support/signing';

const adapter = createGitHubAdapter({ source: 'github', secrets: [SECRETS.github, SECRETS.githubRotated] });
const verify = async (body: string, headers: Record<string, string>) =>
  (await adapter.verify({ rawBody: Buffer.from(body), headers, receivedAt: new Date('2026-12-01T10:00:00Z') })).events[0]!;

const issueOpened = examples.find((group) => group.name === 'issues')!.examples.find((example) => (example as { action?: string }).action === 'opened')!;
const issueBody = JSON.stringify(issueOpened);

describe('createGitHubAdapter().verify', () => {
  it('accepts a real issues.opened payload signed by @octokit/webhooks-methods', async () => {
    const headers = await githubHeaders(issueBody, SECRETS.github, { delivery: 'd-1', event: 'issues' });
    const verified = await verify(issueBody, headers);
    const issue = issueOpened as { repository: { id: number; owner: { type: string } }; issue: { number: number } };
    expect(issue.repository.owner.type).toBe('User');
    expect(verified).toMatchObject({
      id: 'd-1',
      type: 'issues.opened',
      occurredAt: '2026-12-01T10:00:00.000Z',
      // A user's login names a person: the subject has the repository's ID instead.
      subject: `repository ${issue.repository.id}#${issue.issue.number}`,
    });
    expect(verified.payload).toEqual(issueOpened);
  });

  it("names an organisation's repository in the subject, and no login at all for a user's", async () => {
    const subjectFor = async (owner: Record<string, unknown>) => {
      const body = JSON.stringify({ ...issueOpened, repository: { id: 7, full_name: 'someone/repo', owner } });
      return (await verify(body, await githubHeaders(body, SECRETS.github, { delivery: 'd-owner', event: 'issues' }))).subject;
    };
    expect(await subjectFor({ login: 'acme', type: 'Organization' })).toBe(`someone/repo#${(issueOpened as { issue: { number: number } }).issue.number}`);
    for (const owner of [{ login: 'someone', type: 'User' }, { login: 'someone' }]) expect(await subjectFor(owner)).not.toContain('someone');
  });

  it('accepts a form-encoded body, verifying the raw form and reading its payload field', async () => {
    const form = new URLSearchParams({ payload: issueBody }).toString();
    const headers = await githubHeaders(form, SECRETS.github, { delivery: 'd-form', event: 'issues', contentType: 'application/x-www-form-urlencoded' });
    expect(await verify(form, headers)).toMatchObject({ id: 'd-form', type: 'issues.opened', payload: issueOpened });
  });

  it('uses the event name alone when the body has no action (ping)', async () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    expect((await verify(body, await githubHeaders(body, SECRETS.github, { delivery: 'd-ping', event: 'ping' }))).type).toBe('ping');
  });

  it('accepts the second of two configured secrets (rotation)', async () => {
    expect((await verify(issueBody, await githubHeaders(issueBody, SECRETS.githubRotated, { delivery: 'd-2', event: 'issues' }))).id).toBe('d-2');
  });

  it('takes a secret with spaces whole: an HMAC made with one of its words does not verify', async () => {
    const config = loadReceiverConfig({ GITHUB_WEBHOOK_SECRET: 'correct horse battery staple' });
    const whole = createGitHubAdapter({ source: 'github', secrets: config.sources[0]!.secrets });
    const check = (headers: Record<string, string>) => whole.verify({ rawBody: Buffer.from(issueBody), headers, receivedAt: new Date() });
    for (const fragment of ['correct', 'horse', 'battery', 'staple']) {
      const headers = await githubHeaders(issueBody, fragment, { delivery: 'd-fragment', event: 'issues' });
      await expect(check(headers)).rejects.toThrow(SignatureVerificationError);
    }
    expect((await check(await githubHeaders(issueBody, 'correct horse battery staple', { delivery: 'd-whole', event: 'issues' }))).events[0]!.id).toBe(
      'd-whole',
    );
  });

  it('rejects a missing X-Hub-Signature-256 header', async () => {
    const { 'x-hub-signature-256': _omitted, ...headers } = await githubHeaders(issueBody, SECRETS.github, { delivery: 'd', event: 'issues' });
    await expect(verify(issueBody, headers)).rejects.toThrow(/X-Hub-Signature-256 header is missing/);
  });

  it('rejects a signature made with another secret', async () => {
    const headers = await githubHeaders(issueBody, 'not-our-secret', { delivery: 'd', event: 'issues' });
    await expect(verify(issueBody, headers)).rejects.toThrow(SignatureVerificationError);
  });

  it('rejects a body changed after signing', async () => {
    const headers = await githubHeaders(issueBody, SECRETS.github, { delivery: 'd', event: 'issues' });
    await expect(verify(issueBody.replace('opened', 'closed'), headers)).rejects.toThrow(SignatureVerificationError);
  });

  it.each([
    ['X-GitHub-Delivery', 'x-github-delivery', /no delivery ID/],
    ['X-GitHub-Event', 'x-github-event', /no event name/],
  ])('rejects a signed delivery without %s', async (_name, header, message) => {
    const headers: Record<string, string> = await githubHeaders(issueBody, SECRETS.github, { delivery: 'd', event: 'issues' });
    delete headers[header];
    await expect(verify(issueBody, headers)).rejects.toThrow(MalformedEventError);
    await expect(verify(issueBody, headers)).rejects.toThrow(message);
  });

  it('rejects signed malformed JSON, and a form body without a payload field', async () => {
    const json = '{"action": "opened"';
    await expect(verify(json, {})).rejects.toThrow(SignatureVerificationError);
    const signed = await githubHeaders(json, SECRETS.github, { delivery: 'd', event: 'issues' });
    await expect(verify(json, signed)).rejects.toThrow(/not valid JSON/);
    const form = 'other=1';
    const formHeaders = await githubHeaders(form, SECRETS.github, { delivery: 'd', event: 'issues', contentType: 'application/x-www-form-urlencoded' });
    await expect(verify(form, formHeaders)).rejects.toThrow(/not valid JSON/);
  });

  it('reads the signed bytes by what they are, never by the unsigned Content-Type: a form is exactly one payload field', async () => {
    // A signed JSON body whose text holds a form field (an issue titled so), relabelled as a form: still that JSON.
    const inner = JSON.stringify({ action: 'deleted', repository: { id: 1 } });
    const json = JSON.stringify({ ...issueOpened, issue: { title: `a&payload=${encodeURIComponent(inner)}` } });
    const relabelled = await githubHeaders(json, SECRETS.github, { delivery: 'd-label', event: 'issues', contentType: 'application/x-www-form-urlencoded' });
    expect(await verify(json, relabelled)).toMatchObject({ type: 'issues.opened', payload: { issue: { title: expect.stringContaining('&payload=') } } });
    // A form with a second field beside payload is not one GitHub sends.
    const twoFields = `payload=${encodeURIComponent(issueBody)}&payload=${encodeURIComponent(inner)}`;
    const twoHeaders = await githubHeaders(twoFields, SECRETS.github, { delivery: 'd-two', event: 'issues', contentType: 'application/x-www-form-urlencoded' });
    await expect(verify(twoFields, twoHeaders)).rejects.toThrow('A form-encoded GitHub body is exactly one "payload" field.');
    // GitHub's form, labelled JSON, is still its payload.
    const form = new URLSearchParams({ payload: issueBody }).toString();
    expect(await verify(form, await githubHeaders(form, SECRETS.github, { delivery: 'd-form-json', event: 'issues' }))).toMatchObject({
      type: 'issues.opened',
      payload: issueOpened,
    });
  });
});
