import { whenSettled } from 'src/common/async/maybe-async';

const onValue = (value: number): string => `value ${value}`;
const onError = (error: unknown): string => `error ${(error as Error).message}`;

describe('whenSettled', () => {
  it('handles a value at hand at once, without a promise', () => {
    expect(whenSettled(() => 1, onValue, onError)).toBe('value 1');
  });

  it('handles a synchronous throw at once', () => {
    const thrown = (): number => {
      throw new Error('refused');
    };
    expect(whenSettled(thrown, onValue, onError)).toBe('error refused');
  });

  it('handles a promise once it settles, either way', async () => {
    const resolved = whenSettled(() => Promise.resolve(2), onValue, onError);
    const rejected = whenSettled(() => Promise.reject(new Error('down')), onValue, onError);
    expect(resolved).toBeInstanceOf(Promise);
    expect(rejected).toBeInstanceOf(Promise);
    await expect(resolved).resolves.toBe('value 2');
    await expect(rejected).resolves.toBe('error down');
  });
});
