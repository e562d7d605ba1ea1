import { IsString, Length, MaxLength } from 'class-validator';

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
}
