import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Reads `read()` until `done` holds for its value, for at most `withinMs`, and returns the last
 * value read. For effects the service makes after answering (a write it does not wait for): the
 * test then asserts on the value, so a deadline passed fails with what was last seen.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  withinMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(20);
    value = await read();
  }
  return value;
}
