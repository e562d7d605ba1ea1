import type { FastifyRequest } from 'fastify';
import { unstorableQueryException } from 'src/common/validation/query-text';

const NUL = 'must not contain the NUL character (\\u0000)';
const SURROGATE = 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)';

describe('unstorableQueryException', () => {
  const request = (url: string, query: Record<string, unknown>): FastifyRequest =>
    ({ url, query }) as unknown as FastifyRequest;

  it.each<[string, string, Record<string, unknown>, { field: string; problem: string } | null]>([
    ['no query', '/a', {}, null],
    ['plain values', '/a?x=1&y=b', { x: '1', y: 'b' }, null],
    ['a percent-escape of ordinary text', '/a?x=%20', { x: ' ' }, null],
    [
      'a NUL in a value',
      '/a?setting=%00',
      { setting: '\u0000' },
      { field: 'setting', problem: NUL },
    ],
    [
      'a NUL in a repeated value',
      '/a?k=1&k=%00',
      { k: ['1', '\u0000'] },
      { field: 'k.1', problem: NUL },
    ],
    ['a NUL in a name', '/a?%00=1', { '\u0000': '1' }, { field: '\u0000', problem: NUL }],
    ['a lone surrogate', '/a?x=%ED', { x: 'a\ud800' }, { field: 'x', problem: SURROGATE }],
    // Without a percent-escape after the "?", the parsed query is not walked.
    ['no escape in the query', '/a%00?x=1', { x: '\u0000' }, null],
  ])('%s', (_name, url, query, expected) => {
    const refusal = unstorableQueryException(request(url, query));
    if (expected === null) {
      expect(refusal).toBeNull();
      return;
    }
    const message = `${expected.field} ${expected.problem}`;
    expect({ ...refusal, message: refusal?.message }).toMatchObject({
      code: 'BadRequest',
      status: 400,
      message: `Invalid request: ${message}`,
      details: [{ field: expected.field, message }],
    });
  });
});
