/** A benchmarked route: how to prepare it against a running service, and what to request. */
export interface Scenario {
  name: string;
  method: 'GET';
  path: string;
  /** Runs once against the service before measuring; returns the request headers to use. */
  prepare(baseUrl: string): Promise<Record<string, string>>;
}

async function demoLoginToken(baseUrl: string): Promise<string> {
  const code = (await (await fetch(`${baseUrl}/demo/oauth2-code`)).json()) as {
    code: string;
    redirect_uri: string;
  };
  const login = await fetch(`${baseUrl}/oauth2`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code: code.code, redirect_uri: code.redirect_uri }),
  });
  if (!login.ok) throw new Error(`demo login failed: ${login.status} ${await login.text()}`);
  return ((await login.json()) as { token: string }).token;
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'GET /sessions/@me (valid token)',
    method: 'GET',
    path: '/sessions/@me',
    prepare: async (baseUrl) => ({ Authorization: `Bearer ${await demoLoginToken(baseUrl)}` }),
  },
  {
    name: 'GET /config',
    method: 'GET',
    path: '/config',
    prepare: () => Promise.resolve({}),
  },
];
