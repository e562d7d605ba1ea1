import type { Type } from '@nestjs/common';

/**
 * What a feature module brings besides its providers and controllers, read from the module itself
 * so that registering it once (`FEATURE_MODULES` in src/app.features.ts) puts it everywhere:
 *
 * - `tags`: the OpenAPI tags its routes use, each with what it groups (Swagger UI's sections);
 * - `commands`: its admin CLI commands (nest-commander `@Command` classes), which the CLI registers:
 *   a function that imports them (`() => import('./users.cli').then((m) => [m.BanUserCommand])`),
 *   so that the HTTP service, which never runs them, does not load nest-commander and what it
 *   brings (about 300 modules, a tenth of a boot).
 *
 * docs/architecture.md, "Feature modules".
 */
export interface FeatureDeclaration {
  readonly tags?: Readonly<Record<string, string>>;
  readonly commands?: () => Promise<readonly Type[]>;
}

const FEATURE = Symbol('feature');

/** Declares a feature module's tags and CLI commands (see FeatureDeclaration). */
export function Feature(declaration: FeatureDeclaration): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(FEATURE, declaration, target);
  };
}

/** What `module` declares with `@Feature`; nothing for a module without it. */
export function featureOf(module: Type | undefined): FeatureDeclaration {
  return (module && (Reflect.getMetadata(FEATURE, module) as FeatureDeclaration | undefined)) ?? {};
}
