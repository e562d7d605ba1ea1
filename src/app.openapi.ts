import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, getSchemaPath, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { HttpStatus } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { featureOf } from 'src/common/feature/feature.decorator';
import { PERMISSION_EXTENSION } from 'src/permissions/require-permission.decorator';
import { ErrorResponseDto } from 'src/common/errors/error-response.dto';
import { ErrorCode } from 'src/common/errors/error-code';
import { SERVICE_VERSION } from 'src/common/service-version';
import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { withSettingRequestBodies } from 'src/settings/settings-openapi';

export const API_TITLE = 'Bot Management Service API';
export const API_VERSION = SERVICE_VERSION;

/** The page's intro: what the API is and, in demo mode, the three steps to a first call. */
const API_INTRO = [
  'HTTP/JSON API behind a Discord moderation bot. Errors are always `{message, code}` JSON.',
  '',
  '**Trying it in demo mode** (the service runs without `DISCORD_BOT_TOKEN`, against its built-in platform emulator): ' +
    '1. `GET /demo/oauth2-code` (the **demo** section, first below) hands out a login code and `login_body`; ' +
    '2. `POST /oauth2` with that body logs in and answers a `token`; ' +
    '3. **Authorize** (top right) with the token as `UserAuth`, and every operation can be tried out. ' +
    'Demo Community (`1100000000000000100`) is prefilled as the guild.',
].join('\n');

/**
 * The OpenAPI document generated from the controllers, the DTOs and the registered settings (also
 * written to openapi.json). Needs the initialized application.
 */
/**
 * The document as this service serves it: the prefilled login bodies name the redirect URI it
 * allows (the first of OAUTH2_ALLOWED_REDIRECTS), so they work as they are on any port; the
 * committed document shows the default's.
 */
export function withLoginRedirect(document: OpenAPIObject, redirectUri: string): OpenAPIObject {
  if (redirectUri === DEFAULT_REDIRECT_URI) return document;
  return JSON.parse(
    JSON.stringify(document).replaceAll(
      JSON.stringify(DEFAULT_REDIRECT_URI),
      JSON.stringify(redirectUri),
    ),
  ) as OpenAPIObject;
}

export function createOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setVersion(API_VERSION)
    .setDescription(API_INTRO)
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'The token itself as the whole header value (what existing clients send).',
      },
      'PublicAuth',
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque token',
        description: '`Authorization: Bearer <token>`',
      },
      'UserAuth',
    )
    // Relative: the service's own origin, wherever it runs (the document is served by it).
    .addServer('/', 'This service');
  const tags = declaredTags(app);
  for (const [name, description] of tags) config.addTag(name, description);
  const document = SwaggerModule.createDocument(app, config.build());
  assertTagsDeclared(document, tags);
  return withSettingRequestBodies(
    withoutLoneAllOf(
      withQueryTextRefusal(
        withBodyLimit(
          withPermissionLines(
            withDescribedSuccess(withExplicitSecurity(withoutRepeatedSecurity(document))),
          ),
        ),
      ),
    ),
    app,
  );
}

/**
 * The tags the application's modules declare (`@Feature({ tags })`), in the order Nest met the
 * modules: the demo section (the platform module, imported first) leads the page.
 */
function declaredTags(app: NestFastifyApplication): Map<string, string> {
  const tags = new Map<string, string>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const [name, description] of Object.entries(featureOf(module.metatype).tags ?? {})) {
      const known = tags.get(name);
      if (known !== undefined && known !== description) {
        throw new Error(
          `Two modules declare the OpenAPI tag '${name}' with different descriptions`,
        );
      }
      tags.set(name, description);
    }
  }
  return tags;
}

/** An operation's tag that no module declares would be a section without a description. */
function assertTagsDeclared(document: OpenAPIObject, tags: Map<string, string>): void {
  for (const [path, pathItem] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(
      pathItem as Record<string, { tags?: string[] }>,
    )) {
      const undeclared = (operation.tags ?? []).find((tag) => !tags.has(tag));
      if (undeclared !== undefined) {
        throw new Error(
          `${method.toUpperCase()} ${path} uses the OpenAPI tag '${undeclared}', which no module declares: add it to its module's @Feature({ tags })`,
        );
      }
    }
  }
}

type Operations = Record<string, { security?: object[]; summary?: string; responses?: object }>;

function operationsOf(document: OpenAPIObject): Operations[] {
  return Object.values(document.paths) as Operations[];
}

/**
 * An operation without a security requirement is public (`@Public()`): it says so with
 * `security: []`, which strict tools require instead of an absent list.
 */
function withExplicitSecurity(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) operation.security ??= [];
  }
  return document;
}

/**
 * The generator wraps a property's `$ref` to a named enum in an `allOf` of one, which means the
 * `$ref` itself: written as the `$ref` where nothing stands beside it.
 */
function withoutLoneAllOf(document: OpenAPIObject): OpenAPIObject {
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    const properties = (schema as { properties?: Record<string, Record<string, unknown>> })
      .properties;
    for (const [name, property] of Object.entries(properties ?? {})) {
      const { allOf, ...beside } = property as { allOf?: unknown[] };
      if (Array.isArray(allOf) && allOf.length === 1 && Object.keys(beside).length === 0) {
        properties![name] = allOf[0] as Record<string, unknown>;
      }
    }
  }
  return document;
}

/** Every operation that takes a body may answer 413 for a body over the limit (docs/errors.md). */
function withBodyLimit(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem) as {
      requestBody?: object;
      responses?: object;
    }[]) {
      if (!operation.requestBody) continue;
      (operation.responses as Record<string, object>)[String(HttpStatus.PAYLOAD_TOO_LARGE)] = {
        description: 'Error: BadRequest (the body is over the size limit)',
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorResponseDto) },
            example: {
              message:
                'Request body is too large (the limit is 100 KiB; 1 MiB for guild-state reports)',
              code: 'BadRequest',
            },
          },
        },
      };
    }
  }
  return document;
}

/**
 * Every operation may answer 400 for a query string holding text the database refuses (NUL, a lone
 * surrogate): refused for every route in one place (`registerQueryTextCheck`), whether or not the
 * route reads its query.
 */
function withQueryTextRefusal(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) {
      const responses = (operation.responses ?? {}) as Record<string, object>;
      responses[String(HttpStatus.BAD_REQUEST)] ??= {
        description: 'Error: BadRequest',
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorResponseDto) },
            examples: { BadRequest: { value: { message: '…', code: ErrorCode.BadRequest } } },
          },
        },
      };
    }
  }
  return document;
}

/**
 * A route's declared permission (`@RequirePermission`, the `x-required-permission` extension) is
 * said in its description too, which Swagger UI shows and the typed client carries as its doc.
 */
function withPermissionLines(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem) as Record<string, unknown>[]) {
      const permission = operation[PERMISSION_EXTENSION];
      if (typeof permission !== 'string') continue;
      const line = `Needs the permission \`${permission}\` in the guild (a \`guildroles\` entry or a \`guildmembers\` override; see docs/permissions.md).`;
      const description = operation.description;
      operation.description = typeof description === 'string' ? `${description}\n\n${line}` : line;
    }
  }
  return document;
}

/** A success response the code leaves undescribed is described by its operation's summary. */
function withDescribedSuccess(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) {
      const responses = (operation.responses ?? {}) as Record<string, { description?: string }>;
      for (const [status, response] of Object.entries(responses)) {
        if (status.startsWith('2') && !response.description) {
          response.description = operation.summary ?? 'Success';
        }
      }
    }
  }
  return document;
}

/**
 * Security requirements declared on both a controller and one of its routes are listed twice by
 * the generator; a repeated alternative means nothing, so each is kept once.
 */
function withoutRepeatedSecurity(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of operationsOf(document)) {
    for (const operation of Object.values(pathItem)) {
      if (!Array.isArray(operation?.security)) continue;
      const seen = new Set<string>();
      operation.security = operation.security.filter((requirement) => {
        const key = JSON.stringify(requirement);
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
  }
  return document;
}
