import { QueryFailedError } from 'typeorm';
import { serializeError } from 'src/common/logging/error-serializer';

const SECRET = 'user-input-or-token-hash';

function driverError(): Error {
  return Object.assign(new Error('duplicate key value violates unique constraint "pk"'), {
    code: '23505',
    severity: 'ERROR',
    detail: `Key (id)=(${SECRET}) already exists.`,
    params: [SECRET],
    query: 'INSERT INTO t (id) VALUES ($1)',
  });
}

describe('serializeError', () => {
  it('keeps what a diagnosis needs and none of the bound values of a failed query', () => {
    const error = new QueryFailedError('INSERT INTO t (id) VALUES ($1)', [SECRET], driverError());
    const line = JSON.stringify(serializeError(error));
    expect(line).not.toContain(SECRET);
    const serialized = JSON.parse(line) as Record<string, unknown>;
    expect(serialized).toMatchObject({
      type: 'QueryFailedError',
      message: 'duplicate key value violates unique constraint "pk"',
      query: 'INSERT INTO t (id) VALUES ($1)',
      parameters: '[redacted]',
      code: '23505',
      driverError: { code: '23505', detail: '[redacted]', params: '[redacted]' },
    });
    expect(serialized.stack).toEqual(expect.stringContaining('QueryFailedError'));
  });

  it('scrubs request data wherever it is nested, including causes', () => {
    const error = new Error('outer', { cause: driverError() });
    Object.assign(error, { context: { nested: { parameters: [SECRET] } }, list: [driverError()] });
    expect(JSON.stringify(serializeError(error))).not.toContain(SECRET);
  });

  it('keeps the words of a database message but not the value it quotes', () => {
    const driver = Object.assign(new Error(`invalid input syntax for type uuid: "${SECRET}"`), {
      code: '22P02',
      severity: 'ERROR',
      where: `unnamed portal parameter $1 = '${SECRET}'`,
    });
    const error = new QueryFailedError('SELECT 1 FROM t WHERE id = $1', [SECRET], driver);
    const serialized = serializeError(error) as Record<string, unknown>;
    expect(JSON.stringify(serialized)).not.toContain(SECRET);
    expect(serialized).toMatchObject({
      message: 'invalid input syntax for type uuid: "[redacted]"',
      where: '[redacted]',
      code: '22P02',
    });
  });

  it('keeps relation and column names, which are quoted without a colon', () => {
    const driver = Object.assign(new Error('relation "missing_table" does not exist'), {
      code: '42P01',
      severity: 'ERROR',
    });
    const error = new QueryFailedError('SELECT 1 FROM missing_table', [], driver);
    expect(serializeError(error)).toMatchObject({
      message: 'relation "missing_table" does not exist',
    });
  });

  it("keeps the service's own diagnostic fields", () => {
    const error = Object.assign(new Error('The chat platform is unavailable'), {
      detail: 'GET /guilds/:guild_id: status 503 after 3 attempts',
    });
    expect(serializeError(error)).toMatchObject({ detail: error.detail });
  });

  it('leaves values that are not errors as they are', () => {
    expect(serializeError('text')).toBe('text');
  });
});
