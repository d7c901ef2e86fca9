/** A console page's HTML from the receiver at `baseUrl`, signed in with `token` (an admin or operator token). */
export async function consolePage(baseUrl: string, token: string, pathname: string): Promise<string> {
  const login = await fetch(`${baseUrl}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  return (await fetch(`${baseUrl}/console${pathname}`, { headers: { cookie } })).text();
}
