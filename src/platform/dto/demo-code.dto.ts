import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { PKCE_VERIFIER_MESSAGE, PKCE_VERIFIER_PATTERN } from 'src/common/validation/pkce';
import { notASnowflake, SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';

const CHALLENGE_METHODS = ['S256', 'plain'] as const;

export class DemoCodeQueryDto {
  /** Whose login the code is for; defaults to Alice, the owner of Demo Community. */
  @ApiProperty({ required: false, pattern: SNOWFLAKE_PATTERN.source })
  @IsOptional()
  @Matches(SNOWFLAKE_PATTERN, { message: notASnowflake('user_id') })
  user_id?: string;

  /**
   * PKCE (RFC 7636): the challenge of the client's code verifier; `POST /oauth2` must then send
   * that verifier. (No example: Swagger UI would send it, binding every code to it.)
   */
  @IsOptional()
  @Matches(PKCE_VERIFIER_PATTERN, { message: PKCE_VERIFIER_MESSAGE('code_challenge') })
  code_challenge?: string;

  /** How the challenge was made from the verifier; `plain` when absent, as RFC 7636 says. */
  @ApiProperty({ enum: CHALLENGE_METHODS, required: false })
  @IsOptional()
  @IsIn(CHALLENGE_METHODS, { message: 'code_challenge_method must be S256 or plain' })
  code_challenge_method?: (typeof CHALLENGE_METHODS)[number];
}

/** The body of `POST /oauth2` that exchanges the code. */
export class DemoLoginBodyDto {
  code!: string;

  /** @example "http://localhost:3000/docs/oauth2-redirect.html" */
  redirect_uri!: string;
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

  /**
   * The body to send to `POST /oauth2` as it is (for a code asked with a `code_challenge`, add
   * its `code_verifier`).
   */
  login_body!: DemoLoginBodyDto;
}
