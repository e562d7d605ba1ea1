/**
 * `Promise.all`, except that it settles only once every promise has: on a failure, nothing a
 * request started is left running after the request has answered (a platform call still retrying
 * would otherwise be joined by the next request, and fail it too). Rejects with the first failure
 * in the order given.
 */
export async function allSettled<const P extends readonly unknown[]>(
  values: P,
): Promise<{ -readonly [K in keyof P]: Awaited<P[K]> }> {
  const results = await Promise.allSettled(values.map((value) => Promise.resolve(value)));
  const settled: unknown[] = [];
  for (const result of results) {
    if (result.status === 'rejected') throw result.reason;
    settled.push(result.value);
  }
  return settled as { -readonly [K in keyof P]: Awaited<P[K]> };
}
