import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Length, Matches, Min } from 'class-validator';

export class CreateSessionDto {
  /**
   * A name to recognise the token by.
   * @example "moderation-sync script"
   */
  @IsString()
  @Length(1, 64)
  @Matches(/^[^\p{Cc}]*$/u, { message: 'name must not contain control characters' })
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
}
