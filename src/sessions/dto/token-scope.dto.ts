import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  Matches,
  ValidateIf,
} from 'class-validator';
import { SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';

/** A permission string a scope may name: `namespace.perm`, `namespace.*`, `~` to negate. */
const PERMISSION_PATTERN = /^~?[A-Za-z0-9_-]{1,64}\.(?:[A-Za-z0-9_-]{1,64}|\*)$/;
const MAX_SCOPE_ENTRIES = 100;

// Absent parts are no limit; a null part is refused, not taken as absent (`@IsOptional` would let
// it through, leaving a token without the limit its author asked for).

/**
 * What an API token is limited to. Each part that is given limits the token; a call outside the
 * scope is refused with 403 `Restricted`, and inside it the user's own permissions still apply.
 */
export class TokenScopeDto {
  /**
   * The guilds the token may act in (1 to 100 ids); its guild list shows only these.
   * @example ["1100000000000000100"]
   */
  @ValidateIf((_scope, value) => value !== undefined)
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SCOPE_ENTRIES)
  @ArrayUnique()
  @Matches(SNOWFLAKE_PATTERN, {
    each: true,
    message: 'each of guilds must be a snowflake (a decimal id of at most 20 digits)',
  })
  // Last, so checked first: a value that is not a list is told so, not something about lists.
  @IsArray()
  guilds?: string[];

  /**
   * The permission strings the token may use (1 to 100), e.g. `guildroles.view` or
   * `protection.*`; `~` negates. Intersected with the user's own permissions at each call.
   * @example ["guildroles.view", "protection.*"]
   */
  @ValidateIf((_scope, value) => value !== undefined)
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SCOPE_ENTRIES)
  @ArrayUnique()
  @Matches(PERMISSION_PATTERN, {
    each: true,
    message: 'each of permissions must be a permission string such as guildroles.view',
  })
  @IsArray()
  permissions?: string[];
}
