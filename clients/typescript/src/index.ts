import createClient, {
  type Client,
  type FetchResponse,
  type MaybeOptionalInit,
  type Middleware,
} from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { operations, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

type SettingsExecute = operations['SettingsController_execute'];

/** Every body `POST /guilds/{guild_id}/settings` accepts: one per setting and operation. */
export type SettingRequest = SettingsExecute['requestBody']['content']['application/json'];
/**
 * Each setting's operations, each with the `fields` it takes:
 * `SettingsTable['guildroles']['View']` is the View's filters and page of `guildroles`.
 */
export type SettingsTable = {
  [S in SettingRequest['setting']]: {
    [R in Extract<SettingRequest, { setting: S }> as R['operation']]: R['fields'];
  };
};
/** A setting's name: `'guildroles'`, `'protection'`, … */
export type SettingName = keyof SettingsTable;
/** The operations a setting offers: `'View'`, `'Create'`, … */
export type SettingOperation<S extends SettingName> = keyof SettingsTable[S];
/** The `fields` of one setting's operation: its columns, as that operation takes them. */
export type SettingFields<
  S extends SettingName,
  O extends SettingOperation<S>,
> = SettingsTable[S][O];
/** The answer of a settings operation: `data` (`{type, data}`) for a 2xx, `error` otherwise. */
export type SettingResult = FetchResponse<SettingsExecute, object, `${string}/${string}`>;

/** The paths of the API that answer `Method`: `ApiPath<'get'>` is every path `GET` takes. */
export type ApiPath<Method extends HttpMethod> = PathsWithMethod<paths, Method>;

type InitOf<P, M extends HttpMethod> =
  P extends ApiPath<M> ? MaybeOptionalInit<paths[P], M> : never;
type InitArgument<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

/**
 * openapi-fetch's method, typed so that a path the API does not have is reported as such
 * ("… is not assignable to parameter of type 'ApiPath<"get">'"), where openapi-fetch's own
 * signature reports a missing second argument. The call itself is openapi-fetch's.
 */
export type ApiMethod<M extends HttpMethod> = <P extends string, Init extends InitOf<P, M>>(
  url: P extends ApiPath<M> ? P : ApiPath<M>,
  ...init: P extends ApiPath<M> ? InitArgument<Init> : [unknown?]
) => Promise<
  P extends ApiPath<M>
    ? FetchResponse<NonNullable<paths[P][M]>, Init, `${string}/${string}`>
    : never
>;

/** A client of the whole API: `client.GET('/sessions/@me')`, typed by the OpenAPI document. */
export type BotManagementClient = Omit<
  Client<paths>,
  'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'
> & {
  GET: ApiMethod<'get'>;
  PUT: ApiMethod<'put'>;
  POST: ApiMethod<'post'>;
  DELETE: ApiMethod<'delete'>;
  PATCH: ApiMethod<'patch'>;
  /**
   * Runs a settings operation (`POST /guilds/{guild_id}/settings`). `fields` is typed by the
   * setting and operation named before it, so a misspelt column is reported against that
   * setting's columns, not against every setting's.
   */
  settings<S extends SettingName, O extends SettingOperation<S>>(
    guildId: string,
    setting: S,
    operation: O,
    fields: SettingFields<S, O>,
  ): Promise<SettingResult>;
};

export interface BotManagementClientOptions {
  /** Where the service is, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** A login session (`arl_…`) or API token (`ara_…`), sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Another `fetch` (a test's, a proxy's); the global one by default. */
  fetch?: (input: Request) => Promise<Response>;
}

export function createBotManagementClient(
  options: BotManagementClientOptions,
): BotManagementClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  if (options.token !== undefined) client.use(bearer(options.token));
  const settings: BotManagementClient['settings'] = (guildId, setting, operation, fields) =>
    client.POST('/guilds/{guild_id}/settings', {
      params: { path: { guild_id: guildId } },
      // The signature ties fields to the setting and operation; the compiler cannot follow that
      // through the union of bodies, so the body is named as the union it belongs to.
      body: { setting, operation, fields } as SettingRequest,
    });
  // The same methods: ApiMethod only words openapi-fetch's signature differently for the compiler.
  return Object.assign(client, { settings }) as unknown as BotManagementClient;
}

function bearer(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}
