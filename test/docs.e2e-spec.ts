import { useTestApp } from 'test/support/test-app';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}

describe('API documentation', () => {
  const t = useTestApp();

  it('serves Swagger UI at /docs', async () => {
    const res = await t().http().get('/docs').redirects(1).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('swagger-ui');
    expect(res.text).toContain('<title>Bot Management Service API</title>');
  });

  it("serves Swagger UI's assets", async () => {
    const res = await t().http().get('/docs/swagger-ui-init.js').expect(200);
    expect(res.text).toContain('openapi');
  });

  describe('GET /openapi.json', () => {
    let document: {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };

    beforeAll(async () => {
      const res = await t().http().get('/openapi.json').expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      document = res.body;
    });

    it('is an OpenAPI 3 document for version 0.2.0', () => {
      expect(document.openapi).toMatch(/^3\./);
      expect(document.info).toMatchObject({
        title: 'Bot Management Service API',
        version: '0.2.0',
      });
    });

    it('declares both security schemes', () => {
      expect(document.components.securitySchemes).toEqual({
        PublicAuth: expect.objectContaining({
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
        }),
        UserAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      });
    });

    it('lists the routes of this service', () => {
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(['/config', '/healthz', '/readyz']),
      );
    });

    it('documents every error response with the error schema', () => {
      const errorResponses = Object.values(document.paths)
        .flatMap((methods) => Object.values(methods))
        .flatMap((operation) =>
          Object.entries(operation.responses).filter(([status]) => /^[45]\d\d$/.test(status)),
        );
      expect(errorResponses.length).toBeGreaterThan(0);
      for (const [status, response] of errorResponses) {
        const ref = response.content?.['application/json']?.schema?.$ref;
        const expected =
          status === '503'
            ? '#/components/schemas/NotReadyDto'
            : '#/components/schemas/ErrorResponseDto';
        expect({ status, ref }).toEqual({ status, ref: expected });
      }
      expect(document.components.schemas).toHaveProperty('ErrorResponseDto');
    });

    it('documents a 500 on every operation', () => {
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          expect({ path, method, has500: '500' in operation.responses }).toEqual({
            path,
            method,
            has500: true,
          });
        }
      }
    });
  });
});
