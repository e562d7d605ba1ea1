import {
  databaseConnectionFailure,
  listenFailure,
  StartupFailure,
  unwritablePath,
} from 'src/common/startup/startup-failure';

function systemError(code: string, message = `${code}: something`): Error {
  return Object.assign(new Error(message), { code });
}

const URL = 'postgres://bms:hunter2@db.internal:6432/bms_prod';

describe('databaseConnectionFailure', () => {
  it.each([
    [
      'a database that does not exist',
      systemError('3D000', 'database "bms_prod" does not exist'),
      'The database "bms_prod" does not exist on db.internal:6432: create it (createdb bms_prod), or set DATABASE_URL to one that exists',
    ],
    [
      'a refused password',
      systemError('28P01', 'password authentication failed for user "bms"'),
      'PostgreSQL on db.internal:6432 refused the login of "bms" (password authentication failed for user "bms"): check the user and password in DATABASE_URL',
    ],
    [
      'an unknown role',
      systemError('28000', 'role "bms" does not exist'),
      'PostgreSQL on db.internal:6432 refused the login of "bms" (role "bms" does not exist): check the user and password in DATABASE_URL',
    ],
    [
      'nothing listening',
      systemError('ECONNREFUSED'),
      'Nothing answers at db.internal:6432 (DATABASE_URL): start PostgreSQL there, or set DATABASE_URL to a server that runs',
    ],
    [
      'an unknown host',
      systemError('ENOTFOUND'),
      'The database host "db.internal" is not known (ENOTFOUND): fix the host in DATABASE_URL',
    ],
    [
      'a host that does not answer',
      systemError('ETIMEDOUT'),
      'The database at db.internal:6432 cannot be reached (ETIMEDOUT): check the network and DATABASE_URL',
    ],
    [
      "pg's own connection timeout",
      new Error('Connection terminated due to connection timeout'),
      'The database at db.internal:6432 cannot be reached (Connection terminated due to connection timeout): check the network and DATABASE_URL',
    ],
  ])('words %s, without the password', (_label, error, message) => {
    const failure = databaseConnectionFailure(error, URL);
    expect(failure).toBeInstanceOf(StartupFailure);
    expect((failure as StartupFailure).message).toBe(message);
    expect((failure as StartupFailure).message).not.toContain('hunter2');
    expect((failure as StartupFailure).cause).toBe(error);
  });

  it('leaves any other error as it is (a failed migration is not a connection problem)', () => {
    const error = systemError('42P07', 'relation "users" already exists');
    expect(databaseConnectionFailure(error, URL)).toBe(error);
    expect(databaseConnectionFailure('not an error', URL)).toBe('not an error');
  });

  it('names the default port, database and user when the URL leaves them out', () => {
    const failure = databaseConnectionFailure(
      systemError('3D000'),
      'postgres://localhost',
    ) as StartupFailure;
    expect(failure.message).toContain('"postgres" does not exist on localhost:5432');
  });
});

describe('listenFailure', () => {
  const target = { host: '127.0.0.1', port: 3000 };
  it.each([
    ['EADDRINUSE', /^Port 3000 is already in use on 127\.0\.0\.1: .*set PORT to a free port$/],
    ['EACCES', /^Listening on 127\.0\.0\.1:3000 needs privileges .*set PORT to 1024 or above$/],
    ['EADDRNOTAVAIL', /^127\.0\.0\.1 is not an address of this machine: set HOST/],
  ])('words %s', (code, message) => {
    const failure = listenFailure(systemError(code), target);
    expect(failure).toBeInstanceOf(StartupFailure);
    expect((failure as Error).message).toMatch(message);
  });

  it('leaves any other error as it is', () => {
    const error = new Error('boom');
    expect(listenFailure(error, target)).toBe(error);
  });
});

describe('unwritablePath', () => {
  it.each(['EACCES', 'EROFS', 'EPERM', 'ENOTDIR'])('words %s with its remedy', (code) => {
    const failure = unwritablePath(
      '/srv/data',
      systemError(code, `${code}: operation refused, open '/srv/data/pglite.pid'`),
      'fix it',
    );
    expect((failure as Error).message).toBe(
      `Cannot write /srv/data (${code}: operation refused): fix it`,
    );
  });

  it('leaves an error without a system code as it is', () => {
    const error = new Error('boom');
    expect(unwritablePath('/srv/data', error, 'fix it')).toBe(error);
  });
});
