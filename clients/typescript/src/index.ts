import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** A client of the whole API: `client.GET('/sessions/@me')`, typed by the OpenAPI document. */
export type BotManagementClient = Client<paths>;

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
  return client;
}

function bearer(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}
