import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  type Type,
  ValidationPipe,
} from '@nestjs/common';
import { classToPlain, plainToInstance, type ClassTransformOptions } from 'class-transformer';
import {
  getMetadataStorage,
  validateSync,
  ValidationTypes,
  type ValidationError,
  type ValidatorOptions,
} from 'class-validator';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { hasTransformRules } from 'src/common/validation/transform-decorators';
import { summariseDetails, toErrorDetails } from 'src/common/validation/validation-details';

/**
 * A JSON object as the DTO class it is declared as: a new instance holding the object's own
 * fields, which is what class-transformer makes of it for a class without transformation rules, at
 * a fraction of its cost. A class with such rules (`@Type`, `@Transform`, `@Expose`, `@Exclude`,
 * nested validation), and anything but a plain object (arrays, primitives, a `constructor` field),
 * goes through class-transformer.
 */
export function toDtoInstance<T>(
  metatype: Type<T>,
  plain: unknown,
  options?: ClassTransformOptions,
): T | T[] {
  if (!isPlainObject(plain) || Object.hasOwn(plain, 'constructor') || transforms(metatype)) {
    return plainToInstance(metatype, plain, options);
  }
  const instance = new metatype();
  const fields = instance as Record<string, unknown>;
  for (const key of Object.keys(plain)) fields[key] = plain[key];
  return instance;
}

const transformingClasses = new WeakMap<Type<unknown>, boolean>();

/**
 * Whether class-transformer would do more than copy fields for this class: a transformation rule
 * (`@Type`, `@Transform`, `@Expose`, `@Exclude` from `transform-decorators.ts`) on the class or
 * a class it extends, or a nested validation (whose objects must become instances). Read once per
 * class.
 */
function transforms(metatype: Type<unknown>): boolean {
  let answer = transformingClasses.get(metatype);
  if (answer === undefined) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
    answer =
      hasTransformRules(metatype) ||
      rules.some((rule) => rule.type === ValidationTypes.NESTED_VALIDATION);
    transformingClasses.set(metatype, answer);
  }
  return answer;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** What a parsed JSON body is, as a client would name it. */
function jsonTypeOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Values a route receives without validating them: its own decorators' and native types. */
const UNVALIDATED_TYPES: ReadonlySet<unknown> = new Set([
  String,
  Boolean,
  Number,
  Array,
  Object,
  Buffer,
  Date,
]);

/**
 * Validation of DTOs: unknown fields are refused rather than silently dropped, payloads are
 * transformed into their DTO classes, and failures become `BadRequest` with one `details` entry
 * per problem.
 */
class DtoValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      // Every rule is judged, so that one message per field can be chosen (toErrorDetails): a
      // missing field is required, a wrong type is named, before any range or format. The values
      // are read there and never leave the service.
      validationError: { target: false, value: true },
      exceptionFactory: (errors) => {
        const details = toErrorDetails(errors);
        return new AppException(ErrorCode.BadRequest, summariseDetails(details), details);
      },
      transformerPackage: { plainToInstance: toDtoInstance, classToPlain },
    });
  }

  /**
   * Single path and query values stay the strings they arrived as: each route parses its own with
   * a pipe that refuses what `Number()` would quietly accept (`""`, `" 1"`, `1e3`, `007`).
   */
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }

  /**
   * Validated synchronously: no constraint of this API is asynchronous (a unit test holds every
   * registered one to that), and the asynchronous path costs a chain of promises per request.
   */
  protected override validate(object: object, options?: ValidatorOptions): ValidationError[] {
    return validateSync(object, options);
  }

  /**
   * Bodies are parsed JSON and query values come from Fastify's query parser (repeated keys make
   * an array, indices are not parsed): neither makes a sparse array, so the walk that closes gaps
   * in them is skipped.
   */
  protected override closeArrayGaps(): void {}

  /**
   * Bodies are parsed JSON and path and query values strings: no binary value (Buffer, typed
   * array) can reach a DTO, so the search for one is skipped.
   */
  protected override findNestedBinaryValues(): ValidationError[] {
    return [];
  }
}

/**
 * The global pipe (registered as `APP_PIPE`): validates every DTO parameter (see
 * `DtoValidationPipe`) and hands the others (a custom decorator's value, a path or query string)
 * to the route as they came, without the validation path's promise per parameter and request.
 */
@Injectable()
export class AppValidationPipe implements PipeTransform {
  private readonly dtos = new DtoValidationPipe();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const { type, metatype } = metadata;
    if (type === 'custom' || !metatype || UNVALIDATED_TYPES.has(metatype)) return value;
    // Every body of this API is a JSON object: anything else is told so, not judged field by field.
    if (type === 'body' && !isPlainObject(value)) {
      const message = `The request body must be a JSON object, not ${jsonTypeOf(value)}`;
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'body', message }]);
    }
    return this.dtos.transform(value, metadata);
  }
}
