import {
  Exclude as exclude,
  Expose as expose,
  Transform as transform,
  Type as type,
} from 'class-transformer';

/**
 * class-transformer's decorators, as this service uses them: each also marks its class, so the
 * validation pipe knows which DTOs class-transformer must build (`toDtoInstance`) without reading
 * the library's private metadata store. Import them from here; ESLint refuses them from
 * 'class-transformer'.
 */

/** Classes that carry a transformation rule (on the class or on a property). */
const transformedClasses = new WeakSet<object>();

/** A class or property decorator, as TypeScript calls either. */
type Decorate = (target: object, propertyKey?: string | symbol) => void;

/** `decorator`, also marking the class it decorates (or whose property it decorates). */
function marking<A extends unknown[], D>(decorator: (...args: A) => D): (...args: A) => D {
  return (...args: A): D => {
    const decorate = decorator(...args) as unknown as Decorate;
    const marked: Decorate = (target, propertyKey) => {
      transformedClasses.add(typeof target === 'function' ? target : target.constructor);
      decorate(target, propertyKey);
    };
    return marked as unknown as D;
  };
}

export const Type = marking(type);
export const Transform = marking(transform);
export const Expose = marking(expose);
export const Exclude = marking(exclude);

/** Whether the class, or a class it extends, carries a transformation rule. */
export function hasTransformRules(metatype: object): boolean {
  for (
    let target: unknown = metatype;
    typeof target === 'function' && target !== Function.prototype;
    target = Object.getPrototypeOf(target)
  ) {
    if (transformedClasses.has(target)) return true;
  }
  return false;
}
