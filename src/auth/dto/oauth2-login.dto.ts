import { IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { PKCE_VERIFIER_MESSAGE, PKCE_VERIFIER_PATTERN } from 'src/common/validation/pkce';

export class OAuth2LoginDto {
  /** The authorization code from the platform's OAuth2 redirect. */
  @IsString()
  @Length(3, 256)
  code!: string;

  /**
   * The redirect URI the code was issued for; must be one of OAUTH2_ALLOWED_REDIRECTS exactly.
   * @example "http://localhost:3000/docs/oauth2-redirect.html"
   */
  @IsString()
  @MaxLength(2048)
  redirect_uri!: string;

  /**
   * PKCE (RFC 7636): the verifier whose challenge went with the authorization request, for codes
   * issued with one. The service passes it to the platform's token exchange. Leave it out for a
   * code issued without a challenge: the platform refuses the pair.
   */
  @IsOptional()
  @Matches(PKCE_VERIFIER_PATTERN, { message: PKCE_VERIFIER_MESSAGE('code_verifier') })
  code_verifier?: string;
}
