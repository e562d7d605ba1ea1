import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import {
  IDENTITY_WINDOW_MS,
  IN_FLIGHT_MS,
  type IdentityId,
  type IdentityWindows,
  type WindowTake,
} from 'src/platform/identity-window';

/**
 * `decideInWindow` (identity-window.ts) in one atomic step on Redis's clock: concurrent calls from
 * every instance are decided one after another against the same window, so none can see room that
 * another has just taken. A place taken is held as under way (a score IN_FLIGHT_MS ahead) until
 * DONE dates it to the answer. A caller refused room is marked as wanting the identity for a
 * window, so every instance holds the others to their shares meanwhile.
 *
 * KEYS: the identity's window (a sorted set: `<call id>|<caller>` → when its answer came, ms, or
 * a time ahead while under way), and its callers wanting it (a sorted set: caller → until when).
 * ARGV: call id, caller, limit, window (ms), place lifetime while under way (ms).
 * Returns {1} when let through; {0, wait ms, 'full' | 'share'} when refused.
 */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local limit = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local flight = tonumber(ARGV[5])
for _, key in ipairs(KEYS) do
  if redis.call('TYPE', key).ok ~= 'zset' then redis.call('DEL', key) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
-- Places further ahead than a call under way can be (the clock stepped back) would never leave.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. (now + flight), '+inf')
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + window), '+inf')
local entries = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local used = #entries / 2
local function wait(who)
  for i = 1, #entries, 2 do
    local at = tonumber(entries[i + 1])
    if at > now then return window end
    local member = entries[i]
    if who == nil or string.sub(member, string.find(member, '|', 1, true) + 1) == who then
      return math.max(1, at + window - now)
    end
  end
  return window
end
local function refuse(ms, reason)
  redis.call('ZADD', KEYS[2], now + window, ARGV[2])
  redis.call('PEXPIRE', KEYS[2], window)
  return {0, ms, reason}
end
if used >= limit then return refuse(wait(nil), 'full') end
-- While others want the identity, a caller takes places only within its share.
local callers, count, others = {}, 0, false
for _, who in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if who ~= ARGV[2] then others = true; callers[who] = true; count = count + 1 end
end
if others then
  local mine = 0
  for i = 1, #entries, 2 do
    local member = entries[i]
    local who = string.sub(member, string.find(member, '|', 1, true) + 1)
    if not callers[who] then callers[who] = true; count = count + 1 end
    if who == ARGV[2] then mine = mine + 1 end
  end
  if not callers[ARGV[2]] then count = count + 1 end
  if mine >= math.ceil(limit / count) then return refuse(wait(ARGV[2]), 'share') end
end
redis.call('ZADD', KEYS[1], now + flight, ARGV[1] .. '|' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], flight + window)
return {1}
`;

/**
 * Dates a place to its call's answer, on Redis's clock: it then leaves the window a window later.
 * KEYS: the identity's window. ARGV: the place's member.
 */
const DONE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', 'LT', now, ARGV[1])
return 1
`;

/**
 * The windows of the platform identities the fleet shares, in Redis (one sorted set per identity,
 * at most its limit of entries): every instance's calls are counted in the same window, so the
 * identity's rate holds for the whole fleet. A Redis failure to take a place throws;
 * IdentityLimiter then falls back to its in-process windows. A place that cannot be dated (Redis
 * lost meanwhile) leaves after IN_FLIGHT_MS.
 */
export class FleetIdentityWindows implements IdentityWindows {
  private readonly instance = randomBytes(6).toString('hex');
  private seq = 0;

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
  ) {}

  async take(identity: IdentityId, caller: string, limit: number): Promise<WindowTake> {
    const key = `${this.keyPrefix}platform:identity:${identity.key}`;
    const id = `${this.instance}:${this.seq++}`;
    const answer = (await this.redis.eval(
      TAKE,
      2,
      key,
      `${key}:wanting`,
      id,
      caller,
      limit,
      IDENTITY_WINDOW_MS,
      IN_FLIGHT_MS,
    )) as [number, number?, string?];
    if (answer[0] === 1) {
      let answered = false;
      return {
        admitted: true,
        place: {
          done: () => {
            answered = true;
            this.redis.eval(DONE, 1, key, `${id}|${caller}`).catch(() => undefined);
          },
          // A place that cannot be given back (Redis lost meanwhile) leaves after IN_FLIGHT_MS.
          giveBack: () => {
            if (!answered) this.redis.zrem(key, `${id}|${caller}`).catch(() => undefined);
          },
        },
      };
    }
    return {
      admitted: false,
      retryAfterMs: Number(answer[1]),
      reason: answer[2] === 'share' ? 'share' : 'full',
    };
  }
}
