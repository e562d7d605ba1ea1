import { SingleFlight } from 'src/common/async/single-flight';

function deferred(): {
  promise: Promise<string>;
  resolve: (v: string) => void;
  reject: (e: Error) => void;
} {
  let resolve!: (v: string) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SingleFlight', () => {
  it('shares one running task between the callers of one key', async () => {
    const flights = new SingleFlight<string>();
    const task = deferred();
    const start = jest.fn(() => task.promise);
    const first = flights.run('a', start);
    const second = flights.run('a', start);
    task.resolve('done');
    await expect(Promise.all([first, second])).resolves.toEqual(['done', 'done']);
    expect(start).toHaveBeenCalledTimes(1);
  });

  it('runs the tasks of different keys apart', async () => {
    const flights = new SingleFlight<string>();
    await expect(
      Promise.all([
        flights.run('a', () => Promise.resolve('A')),
        flights.run('b', () => Promise.resolve('B')),
      ]),
    ).resolves.toEqual(['A', 'B']);
  });

  it('frees the key once the task settles, failed or not', async () => {
    const flights = new SingleFlight<string>();
    const failing = deferred();
    const failed = flights.run('a', () => failing.promise);
    failing.reject(new Error('boom'));
    await expect(failed).rejects.toThrow('boom');
    await expect(flights.run('a', () => Promise.resolve('again'))).resolves.toBe('again');
  });
});
