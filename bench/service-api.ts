/**
 * One call to a benchmarked service's route; any status other than 200 or 201 stops the
 * benchmark, quoting the answer.
 */
export async function callService(
  baseUrl: string,
  method: string,
  path: string,
  { token, body }: { token?: string; body?: object } = {},
): Promise<unknown> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...(body ? { 'Content-Type': 'application/json' } : {}),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (response.status !== 200 && response.status !== 201) {
    throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return text ? (JSON.parse(text) as unknown) : undefined;
}
