import { createHash, randomBytes } from 'node:crypto';
import type { SeedAuthorizationCode } from 'src/platform/emulator/emulator.seed';

/** Codes are short-lived on the platform (about 100 s); the demo allows a few minutes. */
const CODE_LIFETIME_MS = 10 * 60_000;
const ACCESS_TOKEN_LIFETIME_S = 604_800;
/**
 * Codes waiting to be exchanged: anyone may ask the demo for codes, so past this the oldest are
 * dropped (and expired ones always are).
 */
export const MAX_PENDING_CODES = 10_000;

export interface Grant {
  userId: string;
  scopes: string[];
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

/** PKCE (RFC 7636): the challenge a code was issued with, which its exchange must answer. */
export interface CodeChallenge {
  challenge: string;
  method: 'S256' | 'plain';
}

interface PendingCode {
  userId: string;
  scopes: string[];
  redirectUri: string;
  expiresAt: number;
  challenge?: CodeChallenge;
}

/** The emulated platform's OAuth2 side: codes waiting to be exchanged, and the grants issued. */
export class EmulatorOAuth2 {
  private readonly codes = new Map<string, PendingCode>();
  private readonly grantsByAccess = new Map<string, Grant>();
  private readonly grantsByRefresh = new Map<string, Grant>();

  constructor(
    private readonly knowsUser: (userId: string) => boolean,
    private readonly now: () => number,
    /** Codes that exist from the start: each usable once, and they do not expire. */
    seeded: readonly SeedAuthorizationCode[] = [],
  ) {
    for (const code of seeded) {
      this.codes.set(code.code, {
        userId: code.user_id,
        scopes: code.scopes,
        redirectUri: code.redirect_uri,
        expiresAt: Number.POSITIVE_INFINITY,
      });
    }
  }

  issueCode(
    userId: string,
    scopes: string[],
    redirectUri: string,
    challenge?: CodeChallenge,
  ): string {
    if (!this.knowsUser(userId)) throw new Error(`unknown user ${userId}`);
    const now = this.now();
    this.purgeCodes(now);
    const code = randomBytes(15).toString('base64url');
    this.codes.set(code, {
      userId,
      scopes,
      redirectUri,
      expiresAt: now + CODE_LIFETIME_MS,
      challenge,
    });
    return code;
  }

  /** Codes issued and neither exchanged nor dropped yet. */
  get pendingCodes(): number {
    return this.codes.size;
  }

  /** Drops expired codes, then the oldest while there is no room for one more. */
  private purgeCodes(now: number): void {
    for (const [code, pending] of this.codes) {
      if (pending.expiresAt < now) this.codes.delete(code);
      // Issued codes all live CODE_LIFETIME_MS, in insertion order: the rest are younger.
      else if (Number.isFinite(pending.expiresAt)) break;
    }
    for (const code of this.codes.keys()) {
      if (this.codes.size < MAX_PENDING_CODES) break;
      this.codes.delete(code);
    }
  }

  /**
   * Redeems a code once; a refusal with the token endpoint's `error_description` when it is
   * unknown, used, expired or for another redirect, or the verifier is wrong. A refused verifier
   * leaves the code redeemable, so whoever sees a code without its verifier cannot spend it.
   */
  redeemCode(code: string, redirectUri: string, verifier?: string): Grant | CodeRefusal {
    const pending = this.codes.get(code);
    if (!pending || pending.expiresAt < this.now() || pending.redirectUri !== redirectUri) {
      this.codes.delete(code);
      return { refused: CODE_REFUSALS.invalidCode };
    }
    // A verifier for a code issued without a challenge is refused too (OAuth 2.1: no downgrade).
    if (!pending.challenge && verifier !== undefined) {
      return { refused: CODE_REFUSALS.verifierWithoutChallenge };
    }
    if (pending.challenge && !answersChallenge(pending.challenge, verifier)) {
      return { refused: CODE_REFUSALS.invalidCode };
    }
    this.codes.delete(code);
    return this.createGrant(pending.userId, pending.scopes);
  }

  /** Rotates a grant: the old refresh and access tokens stop working. */
  refresh(refreshToken: string): Grant | undefined {
    const grant = this.grantsByRefresh.get(refreshToken);
    if (!grant) return undefined;
    this.revokeGrant(grant);
    return this.createGrant(grant.userId, grant.scopes);
  }

  /** Revoking either token of an authorization kills all of its tokens, as on the platform. */
  revoke(token: string): void {
    const grant = this.grantsByAccess.get(token) ?? this.grantsByRefresh.get(token);
    if (grant) this.revokeGrant(grant);
  }

  grantForAccessToken(token: string): Grant | undefined {
    const grant = this.grantsByAccess.get(token);
    return grant && grant.expiresAt > this.now() ? grant : undefined;
  }

  private createGrant(userId: string, scopes: string[]): Grant {
    const grant: Grant = {
      userId,
      scopes,
      accessToken: randomBytes(24).toString('base64url'),
      refreshToken: randomBytes(24).toString('base64url'),
      expiresAt: this.now() + ACCESS_TOKEN_LIFETIME_S * 1000,
    };
    this.grantsByAccess.set(grant.accessToken, grant);
    this.grantsByRefresh.set(grant.refreshToken, grant);
    return grant;
  }

  private revokeGrant(grant: Grant): void {
    this.grantsByAccess.delete(grant.accessToken);
    this.grantsByRefresh.delete(grant.refreshToken);
  }
}

/** Why the token endpoint refuses a code, as its `error_description`. */
export const CODE_REFUSALS = {
  invalidCode: 'Invalid "code" in request.',
  verifierWithoutChallenge:
    'A "code_verifier" was sent for a code issued without a "code_challenge".',
} as const;

export interface CodeRefusal {
  refused: (typeof CODE_REFUSALS)[keyof typeof CODE_REFUSALS];
}

/** Whether `verifier` is the one the challenge was made from (RFC 7636 §4.6). */
function answersChallenge(challenge: CodeChallenge, verifier: string | undefined): boolean {
  if (verifier === undefined) return false;
  const expected =
    challenge.method === 'S256'
      ? createHash('sha256').update(verifier).digest('base64url')
      : verifier;
  return expected === challenge.challenge;
}
