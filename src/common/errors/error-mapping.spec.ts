import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  HttpStatus,
  InternalServerErrorException,
  MethodNotAllowedException,
  NotFoundException,
  PayloadTooLargeException,
  UnauthorizedException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { UnconfirmedCommitError } from 'src/common/errors/outage';
import { AppException } from 'src/common/errors/app.exception';
import { ERROR_STATUS, ErrorCode } from 'src/common/errors/error-code';
import { renderError } from 'src/common/errors/error-mapping';

const ID = '00000000-0000-4000-8000-000000000000';

describe('ERROR_STATUS', () => {
  it.each([
    [ErrorCode.BadRequest, 400],
    [ErrorCode.NoAuthToken, 401],
    [ErrorCode.InvalidToken, 401],
    [ErrorCode.ApiBanned, 403],
    [ErrorCode.Restricted, 403],
    [ErrorCode.NotFound, 404],
    [ErrorCode.RateLimited, 429],
    [ErrorCode.InternalAuthError, 500],
    [ErrorCode.InternalError, 500],
  ])('%s is sent with %i', (code, status) => {
    expect(ERROR_STATUS[code]).toBe(status);
  });

  it('has a status for every code and nothing else', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual(Object.values(ErrorCode).sort());
  });
});

describe('AppException', () => {
  it('takes the status of its code', () => {
    expect(new AppException(ErrorCode.NotFound, 'x').status).toBe(404);
  });

  it('allows 413 for BadRequest and refuses statuses foreign to the code', () => {
    expect(
      new AppException(ErrorCode.BadRequest, 'x', undefined, HttpStatus.PAYLOAD_TOO_LARGE).status,
    ).toBe(413);
    expect(() => new AppException(ErrorCode.NotFound, 'x', undefined, HttpStatus.OK)).toThrow(
      /not allowed/,
    );
  });
});

describe('renderError', () => {
  it('renders an AppException with its details', () => {
    const details = [{ field: 'name', message: 'name must be a string' }];
    expect(renderError(new AppException(ErrorCode.BadRequest, 'Invalid', details), ID)).toEqual({
      status: 400,
      body: { message: 'Invalid', code: 'BadRequest', details },
      unexpected: false,
    });
  });

  it('omits empty details', () => {
    expect(
      renderError(new AppException(ErrorCode.NotFound, 'No such session', []), ID).body,
    ).toEqual({ message: 'No such session', code: 'NotFound' });
  });

  it('gives a 5xx AppException an error_id and logs it', () => {
    expect(renderError(new AppException(ErrorCode.InternalAuthError, 'Auth failed'), ID)).toEqual({
      status: 500,
      body: { message: 'Auth failed', code: 'InternalAuthError', error_id: ID },
      unexpected: true,
    });
  });

  it.each<[HttpException, number, ErrorCode]>([
    [new BadRequestException('bad'), 400, ErrorCode.BadRequest],
    [new UnauthorizedException(), 401, ErrorCode.InvalidToken],
    [new ForbiddenException(), 403, ErrorCode.Restricted],
    [new NotFoundException('Cannot GET /x'), 404, ErrorCode.NotFound],
    [new MethodNotAllowedException(), 404, ErrorCode.NotFound],
    [new PayloadTooLargeException(), 413, ErrorCode.BadRequest],
    [new UnsupportedMediaTypeException(), 400, ErrorCode.BadRequest],
    [new HttpException('Too Many Requests', 429), 429, ErrorCode.RateLimited],
    [new HttpException('teapot', 418), 400, ErrorCode.BadRequest],
  ])('maps %p to %i %s', (exception, status, code) => {
    const rendered = renderError(exception, ID);
    expect(rendered.status).toBe(status);
    expect(rendered.body.code).toBe(code);
    expect(rendered.body.message.length).toBeGreaterThan(0);
    expect(rendered.body.error_id).toBeUndefined();
    expect(rendered.unexpected).toBe(false);
  });

  it("joins Nest's message arrays", () => {
    expect(renderError(new BadRequestException(['a is bad', 'b is bad']), ID).body.message).toBe(
      'a is bad; b is bad',
    );
  });

  it.each([
    new Error('connect ECONNREFUSED 10.0.0.5:5432'),
    new TypeError("Cannot read properties of undefined (reading 'x')"),
    new InternalServerErrorException('SELECT * FROM secrets'),
    'a thrown string',
    undefined,
    null,
    { message: 'an object' },
  ])('hides the internals of %p behind InternalError', (thrown) => {
    const rendered = renderError(thrown, ID);
    expect(rendered).toEqual({
      status: 500,
      body: { message: expect.any(String), code: 'InternalError', error_id: ID },
      unexpected: true,
    });
    expect(rendered.body.message).not.toMatch(/ECONNREFUSED|SELECT|undefined|string|object/);
  });

  describe('database constraint violations', () => {
    /** What TypeORM throws for a statement PostgreSQL (or PGlite, through `pg`) refused. */
    const refused = (code: string): QueryFailedError =>
      new QueryFailedError(
        `INSERT INTO "guild_roles" ("guild_id", "role_id") VALUES ($1, $2)`,
        ['1100000000000000100', '1100000000000000104'],
        Object.assign(new Error(`violates constraint "PK_86a938727fe9f3a85b22074e615"`), {
          code,
          constraint: 'PK_86a938727fe9f3a85b22074e615',
          table: 'guild_roles',
          detail: 'Key (guild_id, role_id)=(1100000000000000100, 1100000000000000104) exists.',
        }),
      );

    it.each([
      [
        '23505',
        'unique',
        'This conflicts with an entry that already exists; read it and update it instead',
      ],
      [
        '23503',
        'foreign key',
        'This refers to something that does not exist, or removes something still in use',
      ],
      ['23514', 'check', 'A value is outside what is allowed'],
    ])('maps SQLSTATE %s (%s) to 400 BadRequest, logged as a warning', (code, _kind, message) => {
      const rendered = renderError(refused(code), ID);
      expect(rendered).toEqual({
        status: 400,
        body: { message, code: 'BadRequest' },
        unexpected: false,
        constraint: {
          sqlState: code,
          constraint: 'PK_86a938727fe9f3a85b22074e615',
          table: 'guild_roles',
        },
      });
      expect(JSON.stringify(rendered.body)).not.toMatch(
        /INSERT|guild_roles|PK_|1100000000000000104/,
      );
    });

    // A NOT NULL violation is the service's own omission, not something a request can cause.
    it.each(['23502', '40001', '40P01', '57014', undefined])(
      'keeps any other database failure (SQLSTATE %p) a logged 500',
      (code) => {
        const error = new QueryFailedError('SELECT 1', [], Object.assign(new Error('x'), { code }));
        expect(renderError(error, ID)).toEqual({
          status: 500,
          body: { message: expect.any(String), code: 'InternalError', error_id: ID },
          unexpected: true,
        });
      },
    );
  });

  describe('a database that is down or stalled', () => {
    const driverError = (message: string, code?: string): Error =>
      Object.assign(new Error(message), code === undefined ? {} : { code });
    const inQuery = (error: Error): QueryFailedError =>
      new QueryFailedError('SELECT 1 FROM sessions WHERE id = $1', ['secret'], error);

    it.each([
      ['a read timeout', inQuery(driverError('Query read timeout'))],
      ['no connection in time', driverError('timeout exceeded when trying to connect')],
      ['a connection dropped', inQuery(driverError('Connection terminated unexpectedly'))],
      ['a refused connection', driverError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
      ['a server shutting down (57P01)', inQuery(driverError('terminating connection', '57P01'))],
      ['a server starting (57P03)', driverError('the database system is starting up', '57P03')],
      ['a connection exception (08006)', inQuery(driverError('x', '08006'))],
    ])('%s: 500 InternalError naming the database, with Retry-After', (_name, error) => {
      const rendered = renderError(error, ID);
      expect(rendered).toEqual({
        status: 500,
        body: {
          message: 'The database is unavailable; try again later',
          code: 'InternalError',
          error_id: ID,
        },
        unexpected: true,
        headers: { 'Retry-After': 5 },
      });
    });

    it.each([
      ['as thrown', new UnconfirmedCommitError('Query read timeout')],
      [
        'wrapped by TypeORM',
        new QueryFailedError('COMMIT', [], new UnconfirmedCommitError('Query read timeout')),
      ],
    ])(
      'a COMMIT left unanswered (%s): 500 saying the change may have been applied',
      (_n, error) => {
        expect(renderError(error, ID)).toEqual({
          status: 500,
          body: {
            message:
              'The database did not confirm the change, which may have been applied; read it before trying again',
            code: 'InternalError',
            error_id: ID,
          },
          unexpected: true,
          headers: { 'Retry-After': 5 },
        });
      },
    );

    it.each([
      ['its own statement timeout (57014)', inQuery(driverError('canceling statement', '57014'))],
      ['a lock not granted (55P03)', inQuery(driverError('lock timeout', '55P03'))],
      ['a serialization failure (40001)', inQuery(driverError('could not serialize', '40001'))],
    ])('the server answering (%s) is no outage', (_name, error) => {
      expect(renderError(error, ID).headers).toBeUndefined();
    });
  });
});
