import { IsOptional, Matches } from 'class-validator';
import { notASnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';

export class DemoCodeQueryDto {
  /**
   * Whose login the code is for; defaults to the demo user.
   * @example "1100000000000000010"
   */
  @IsOptional()
  @Matches(SNOWFLAKE_PATTERN, { message: notASnowflake('user_id') })
  user_id?: string;
}

/** An authorization code as the platform's consent screen would hand it to the dashboard. */
export class DemoCodeDto {
  /** Single use; exchange it with `POST /oauth2` within 10 minutes. */
  code!: string;

  /** The redirect URI the code is bound to: send the same one to `POST /oauth2`. */
  redirect_uri!: string;

  /** @example "1100000000000000010" */
  user_id!: string;

  /** Seconds until the code expires. */
  expires_in!: number;
}
