import fastifyCors from '@fastify/cors';
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify';
import { CORS_OPTIONS, registerCorsPreflight, SIMPLE_CORS_HEADERS, withCorsHeaders } from './cors';

/** Every CORS header of an answer (and `vary`, which the CORS protocol also governs). */
function corsHeadersOf(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers).filter(
      ([name]) => name.startsWith('access-control-') || name === 'vary',
    ),
  );
}

/** Answers as the service is set up: the preflight plugin in its own context, headers per request. */
async function asConfigured(): Promise<FastifyInstance> {
  const app = Fastify();
  await registerCorsPreflight(app);
  app.addHook('onRequest', (_request, reply, done) => {
    withCorsHeaders(reply);
    done();
  });
  addRoutes(app);
  return app;
}

/** The plugin as its documentation registers it, on the whole instance. */
async function withPlugin(): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(fastifyCors, CORS_OPTIONS);
  addRoutes(app);
  return app;
}

function addRoutes(app: FastifyInstance): void {
  app.get('/config', () => ({ ok: true }));
  app.post('/guilds/:id/settings', () => ({ ok: true }));
  app.get('/refused', async (_request, reply) => reply.code(401).send({ code: 'NoAuthToken' }));
}

const REQUESTS: Record<string, InjectOptions> = {
  'a GET from another origin': {
    method: 'GET',
    url: '/config',
    headers: { origin: 'https://dashboard.example' },
  },
  'a GET without an origin': { method: 'GET', url: '/config' },
  'a POST with a body': {
    method: 'POST',
    url: '/guilds/1/settings',
    headers: { origin: 'https://dashboard.example', 'content-type': 'application/json' },
    payload: '{}',
  },
  'a HEAD': { method: 'HEAD', url: '/config', headers: { origin: 'null' } },
  'an error answer': { method: 'GET', url: '/refused', headers: { origin: 'https://a.example' } },
  'an unknown path': { method: 'GET', url: '/nowhere', headers: { origin: 'https://a.example' } },
  'a preflight': {
    method: 'OPTIONS',
    url: '/guilds/1/settings',
    headers: {
      origin: 'https://dashboard.example',
      'access-control-request-method': 'DELETE',
      'access-control-request-headers': 'authorization,content-type',
    },
  },
  'a preflight without its headers': { method: 'OPTIONS', url: '/config' },
};

describe('CORS', () => {
  let configured: FastifyInstance;
  let plugin: FastifyInstance;

  beforeAll(async () => {
    [configured, plugin] = await Promise.all([asConfigured(), withPlugin()]);
  });

  afterAll(async () => {
    await Promise.all([configured.close(), plugin.close()]);
  });

  it.each(Object.entries(REQUESTS))(
    'answers %s with exactly the headers and status of @fastify/cors',
    async (_name, request) => {
      const [ours, theirs] = await Promise.all([
        configured.inject(request),
        plugin.inject(request),
      ]);
      expect(ours.statusCode).toBe(theirs.statusCode);
      expect(corsHeadersOf(ours.headers)).toEqual(corsHeadersOf(theirs.headers));
      expect(corsHeadersOf(theirs.headers)).not.toEqual({});
    },
  );

  it('sets on every answer the two headers the plugin gives a non-preflight one', async () => {
    const answer = await plugin.inject(REQUESTS['a GET from another origin']);
    expect(corsHeadersOf(answer.headers)).toEqual(Object.fromEntries(SIMPLE_CORS_HEADERS));
  });

  it('answers a preflight for every method the API uses, with the headers asked for', async () => {
    const answer = await configured.inject(REQUESTS['a preflight']);
    expect(answer.statusCode).toBe(204);
    expect(answer.headers['access-control-allow-methods']).toBe(CORS_OPTIONS.methods.join(', '));
    expect(answer.headers['access-control-allow-headers']).toBe('authorization,content-type');
  });
});
