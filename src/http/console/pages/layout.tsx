import type { ReactNode } from 'react';
import type { ConsoleSession } from '../../../db/console-sessions';

/** Where the console is served; every link and form starts here. */
export const BASE = '/console';

const SECTIONS = [
  ['Overview', ''],
  ['Events', '/events'],
  ['Failures', '/failures'],
  ['Refused', '/refused'],
] as const;

/**
 * Every page's frame. No inline script or style anywhere (the Content-Security-Policy allows only
 * the console's own files): charts are drawn by ../assets/console.js from JSON the page links to.
 */
export function Layout({ title, session, children }: { title: string; session?: ConsoleSession; children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · durable-webhooks`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={`${BASE}/assets/console.css`} />
        <script src={`${BASE}/assets/chart.umd.min.js`} defer />
        <script src={`${BASE}/assets/console.js`} defer />
      </head>
      <body>
        <header>
          <strong className="brand">durable-webhooks</strong>
          {session && (
            <nav>
              {SECTIONS.map(([name, path]) => (
                <a key={name} href={`${BASE}${path}`}>
                  {name}
                </a>
              ))}
            </nav>
          )}
          {session && (
            <form method="post" action={`${BASE}/logout`} className="signed-in">
              <CsrfField session={session} />
              <span>
                {session.tokenName} ({session.role})
              </span>
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        <main>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** The session's CSRF token, which every POST form carries. */
export function CsrfField({ session }: { session: ConsoleSession }) {
  return <input type="hidden" name="_csrf" value={session.csrf} />;
}

export function Time({ at }: { at: Date | string | null }) {
  if (!at) return <span className="muted">-</span>;
  const iso = new Date(at).toISOString();
  return <time dateTime={iso}>{iso.replace('T', ' ').slice(0, 19)}</time>;
}

export function Status({ status }: { status: string }) {
  return <span className={`status status-${status.replace(/[^a-z-]/g, '')}`}>{status}</span>;
}

/** A message at the top of a page: what an action did, or why it did not. */
export function Notice({ kind, children }: { kind: 'done' | 'error'; children: ReactNode }) {
  return (
    <p className={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}

export const eventPath = (eventId: string) => `${BASE}/events/${encodeURIComponent(eventId)}`;
export const entityPath = ({ flow, source, key }: { flow: string; source: string; key: string }) =>
  `${BASE}/entities/${[flow, source, key].map(encodeURIComponent).join('/')}`;
