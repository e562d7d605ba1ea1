import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'src/common/validation/transform-decorators';
import {
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Length,
  Matches,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { TokenScopeDto } from 'src/sessions/dto/token-scope.dto';

export class CreateSessionDto {
  /**
   * A name to recognise the token by.
   * @example "moderation-sync script"
   */
  @IsString()
  @Length(1, 64)
  // The control characters (Unicode's Cc) spelled out as ranges, not as `\p{Cc}`: the pattern is
  // published in the OpenAPI document, and clients compile it without the `u` flag.
  // eslint-disable-next-line no-control-regex
  @Matches(/^[^\u0000-\u001F\u007F-\u009F]*$/, {
    message: 'name must not contain control characters',
  })
  name!: string;

  /** Only API tokens can be created here; login sessions come from `POST /oauth2`. */
  @ApiProperty({ enum: ['api'] })
  @IsIn(['api'], { message: 'type must be "api"' })
  type!: 'api';

  /**
   * Lifetime in seconds, from 60 up to API_TOKEN_MAX_TTL (10 years by default).
   * @example 2592000
   */
  @IsInt()
  @Min(60)
  expiry!: number;

  /** Limits the token to some guilds and some permission strings; without it, it has no limit. */
  @ValidateIf((_body, value) => value !== undefined)
  @IsObject({ message: 'scope must be an object' })
  @ValidateNested()
  @Type(() => TokenScopeDto)
  scope?: TokenScopeDto;
}
