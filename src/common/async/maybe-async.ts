/**
 * Hands what `compute` gives to `onValue`, or what it throws to `onError`; when it gives a
 * promise, once that settles. A value already at hand is handled at once, without a promise: on a
 * request path each promise costs a microtask turn.
 */
export function whenSettled<T, R>(
  compute: () => T | Promise<T>,
  onValue: (value: T) => R,
  onError: (error: unknown) => R,
): R | Promise<Awaited<R>> {
  let value: T | Promise<T>;
  try {
    value = compute();
  } catch (error) {
    return onError(error);
  }
  if (!(value instanceof Promise)) return onValue(value);
  // A handler's own promise is adopted by the one `then` returns, so it settles with its value.
  return value.then(onValue, onError) as Promise<Awaited<R>>;
}
