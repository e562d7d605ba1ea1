import { privatePostgresUnavailable, privateRedisUnavailable } from 'test/support/private-servers';

/** `describe`, or `describe.skip` with the reason printed, for tests that need private servers. */
export function describeWithPrivateServers(needs: {
  redis?: boolean;
  postgres?: boolean;
}): jest.Describe {
  const reasons = [
    needs.redis ? privateRedisUnavailable() : null,
    needs.postgres ? privatePostgresUnavailable() : null,
  ].filter((reason): reason is string => reason !== null);
  if (reasons.length === 0) return describe;
  console.warn(`Skipped: this machine cannot run a server of its own: ${reasons.join('; ')}`);
  return describe.skip;
}
