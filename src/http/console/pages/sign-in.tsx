import { BASE, Layout, Notice } from './layout';

/** Sign in with an admin or viewer token; it is exchanged for a session cookie and never stored in the page. */
export function SignInPage({ error }: { error?: string }) {
  return (
    <Layout title="Sign in">
      {error && <Notice kind="error">{error}</Notice>}
      <form method="post" action={`${BASE}/login`} className="sign-in">
        <label>
          Admin or viewer token <input type="password" name="token" autoComplete="current-password" required />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  );
}

/** What a refused or failed console request shows: the status's reason, in words. */
export function ProblemPage({ title, detail }: { title: string; detail: string }) {
  return (
    <Layout title={title}>
      <Notice kind="error">{detail}</Notice>
      <p>
        <a href={BASE}>Back to the console</a>
      </p>
    </Layout>
  );
}
