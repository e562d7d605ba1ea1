import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, type Environment } from 'src/config/app-config';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';

const KEY = Buffer.alloc(32, 1).toString('base64');
const memory = (env: Environment = {}): Environment => ({ DATABASE_URL: 'memory://', ...env });

/** The working directories the tests load configurations in, removed after them. */
const scratch = mkdtempSync(join(tmpdir(), 'bms-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const workDir = (): string => mkdtempSync(join(scratch, 'cwd-'));

function configError(env: Environment): string {
  try {
    loadConfig(env, workDir());
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig(memory(), '/srv/app');
    expect(config.http).toEqual({
      port: 3000,
      host: '127.0.0.1',
      trustProxy: false,
      bodyLimitBytes: 102_400,
      requestTimeoutMs: 30_000,
    });
    expect(config.database).toEqual({ engine: 'pglite', directory: null });
    expect(config.dataDir).toBe('/srv/app/.data');
    expect(config.redisUrl).toBeNull();
    expect(config.redisKeyPrefix).toBe('bms:');
    expect(config.platform).toEqual({
      apiUrl: 'https://discord.com/api',
      restProxyApiUrl: null,
      clientId: DEMO_DEFAULTS.clientId,
      clientSecret: DEMO_DEFAULTS.clientSecret,
      botToken: null,
      demoMode: true,
      timeoutMs: 5_000,
      invalidRequestLimit: 9_000,
      queueMaxWaitMs: 2_000,
      cacheTtlSeconds: 5,
      userGuildsCacheTtlSeconds: 300,
      botFeedStaleAfterSeconds: 120,
      guildStateFeed: true,
      guildStateMaxAgeSeconds: 600,
      guildStateCacheBytes: 64 * 1_048_576,
      emulatorRateLimits: false,
      demoBotReporter: true,
    });
    expect(config.oauth2.allowedRedirects).toEqual([
      'http://localhost:3000/docs/oauth2-redirect.html',
    ]);
    expect(config.community).toEqual({
      mainServer: DEMO_DEFAULTS.mainServer,
      supportServerInvite: DEMO_DEFAULTS.supportServerInvite,
    });
    expect(config.sessions).toEqual({
      loginSessionTtlSeconds: 604_800,
      apiTokenMaxTtlSeconds: 315_360_000,
      maxApiTokensPerUser: 25,
    });
    // Demo mode: the default demo login may use /internal/*.
    expect(config.rootUsers).toEqual([DEMO_DEFAULTS.login]);
    expect(config.tokenEncryptionKey).toHaveLength(32);
    expect(config.rateLimits.enabled).toBe(true);
    expect(config.rateLimits.buckets).toEqual({
      anonymous: { limit: 60, windowSeconds: 60 },
      authenticated: { limit: 300, windowSeconds: 60 },
      oauth2: { limit: 10, windowSeconds: 60 },
      'member-lookup': { limit: 100, windowSeconds: 60 },
      'invalid-token': { limit: 20, windowSeconds: 60 },
      'guilds-refresh': { limit: 3, windowSeconds: 300 },
      'guild-check': { limit: 30, windowSeconds: 60 },
      'guild-info': { limit: 30, windowSeconds: 60 },
      'guild-load': { limit: 30, windowSeconds: 60 },
      'settings-write': { limit: 60, windowSeconds: 60 },
      'bot-feed': { limit: 60_000, windowSeconds: 60 },
    });
    expect(config.rateLimits.operators).toEqual([DEMO_DEFAULTS.login]);
    expect(config.logLevel).toBe('info');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://bms:pw@db:5432/bms',
      DATABASE_POOL_SIZE: '4',
      DATA_DIR: '/var/lib/bms',
      REDIS_URL: 'redis://cache:6379/0',
      REDIS_KEY_PREFIX: 'staging:bms:',
      DISCORD_API_URL: 'http://127.0.0.1:9999/api/',
      DISCORD_REST_PROXY_URL: 'http://discord-proxy:8080/',
      DISCORD_CLIENT_ID: '123456789012345678',
      DISCORD_CLIENT_SECRET: 'shh',
      DISCORD_BOT_TOKEN: 'bot-token',
      PLATFORM_TIMEOUT_MS: '2500',
      PLATFORM_INVALID_REQUEST_LIMIT: '3000',
      PLATFORM_QUEUE_MAX_WAIT_MS: '1500',
      HTTP_REQUEST_TIMEOUT_MS: '10000',
      PLATFORM_CACHE_TTL: '30',
      RATE_LIMIT_OAUTH2: '5/30',
      RATE_LIMIT_GUILDS_REFRESH: '1/600',
      USER_GUILDS_CACHE_TTL: '600',
      BOT_FEED_STALE_AFTER: '300',
      GUILD_STATE_FEED: 'false',
      GUILD_STATE_MAX_AGE: '60',
      GUILD_STATE_CACHE_MB: '16',
      EMULATOR_RATE_LIMITS: 'yes',
      DEMO_BOT_REPORTER: 'false',
      OAUTH2_ALLOWED_REDIRECTS: 'https://dash.example/cb, http://localhost:5173/cb',
      MAIN_SERVER: '42',
      SUPPORT_SERVER_INVITE: 'https://discord.gg/abc',
      LOGIN_SESSION_TTL: '3600',
      API_TOKEN_MAX_TTL: '86400',
      MAX_API_TOKENS_PER_USER: '5',
      ROOT_USERS: '1,22,333',
      TOKEN_ENCRYPTION_KEY: KEY,
      TRUST_PROXY: '2',
      RATE_LIMITS_ENABLED: 'false',
      LOG_LEVEL: 'debug',
    });
    expect(config.http).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      trustProxy: 2,
      requestTimeoutMs: 10_000,
    });
    expect(config.database).toEqual({
      engine: 'postgres',
      url: 'postgres://bms:pw@db:5432/bms',
      poolSize: 4,
    });
    expect(config.dataDir).toBe('/var/lib/bms');
    expect(config.redisUrl).toBe('redis://cache:6379/0');
    expect(config.redisKeyPrefix).toBe('staging:bms:');
    expect(config.platform).toEqual({
      apiUrl: 'http://127.0.0.1:9999/api',
      restProxyApiUrl: 'http://discord-proxy:8080/api',
      clientId: '123456789012345678',
      clientSecret: 'shh',
      botToken: 'bot-token',
      demoMode: false,
      timeoutMs: 2500,
      invalidRequestLimit: 3000,
      queueMaxWaitMs: 1500,
      cacheTtlSeconds: 30,
      userGuildsCacheTtlSeconds: 600,
      botFeedStaleAfterSeconds: 300,
      guildStateFeed: false,
      guildStateMaxAgeSeconds: 60,
      guildStateCacheBytes: 16 * 1_048_576,
      emulatorRateLimits: true,
      demoBotReporter: false,
    });
    expect(config.oauth2.allowedRedirects).toEqual([
      'https://dash.example/cb',
      'http://localhost:5173/cb',
    ]);
    expect(config.community).toEqual({
      mainServer: '42',
      supportServerInvite: 'https://discord.gg/abc',
    });
    expect(config.sessions).toEqual({
      loginSessionTtlSeconds: 3600,
      apiTokenMaxTtlSeconds: 86400,
      maxApiTokensPerUser: 5,
    });
    expect(config.rootUsers).toEqual(['1', '22', '333']);
    expect(config.tokenEncryptionKey.equals(Buffer.from(KEY, 'base64'))).toBe(true);
    expect(config.rateLimits.enabled).toBe(false);
    expect(config.rateLimits.buckets.oauth2).toEqual({ limit: 5, windowSeconds: 30 });
    expect(config.rateLimits.buckets['guilds-refresh']).toEqual({ limit: 1, windowSeconds: 600 });
    expect(config.logLevel).toBe('debug');
  });

  it.each([
    ['http://discord-proxy:8080', 'http://discord-proxy:8080/api'],
    ['http://discord-proxy:8080/api/', 'http://discord-proxy:8080/api'],
    ['https://proxy.internal', 'https://proxy.internal/api'],
  ])('sends proxied calls under /api of DISCORD_REST_PROXY_URL=%s', (value, expected) => {
    const config = loadConfig(
      memory({
        DISCORD_BOT_TOKEN: 'bot-token',
        DISCORD_CLIENT_ID: '1100000000000000001',
        DISCORD_CLIENT_SECRET: 'secret',
        DISCORD_REST_PROXY_URL: value,
      }),
    );
    expect(config.platform.restProxyApiUrl).toBe(expected);
  });

  it('uses no REST proxy in demo mode: the emulator is not the shared platform', () => {
    const config = loadConfig(memory({ DISCORD_REST_PROXY_URL: 'http://discord-proxy:8080' }));
    expect(config.platform.restProxyApiUrl).toBeNull();
  });

  it('treats empty values as unset', () => {
    const config = loadConfig(memory({ PORT: '', LOG_LEVEL: ' ', ROOT_USERS: '' }));
    expect(config.http.port).toBe(3000);
    expect(config.logLevel).toBe('info');
    expect(config.rootUsers).toEqual([DEMO_DEFAULTS.login]);
  });

  it('names no root user by default outside demo mode', () => {
    const live = loadConfig(
      memory({
        DISCORD_BOT_TOKEN: 'bot-token',
        DISCORD_CLIENT_ID: '1100000000000000001',
        DISCORD_CLIENT_SECRET: 'secret',
      }),
    );
    expect(live.rootUsers).toEqual([]);
    expect(live.http.host).toBe('127.0.0.1');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['DATABASE_URL', 'postgres://has space'],
    ['REDIS_URL', 'http://cache'],
    ['REDIS_KEY_PREFIX', 'has spaces'],
    ['DISCORD_API_URL', 'not a url'],
    ['DISCORD_API_URL', 'ftp://discord.com/api'],
    ['DISCORD_REST_PROXY_URL', '127.0.0.1:8080'],
    ['DISCORD_REST_PROXY_URL', 'ftp://discord-proxy'],
    ['DISCORD_REST_PROXY_URL', 'http://user:secret@discord-proxy:8080'],
    ['DISCORD_REST_PROXY_URL', 'http://discord-proxy:8080/?a=b'],
    ['DISCORD_REST_PROXY_URL', 'http://discord-proxy:8080/#top'],
    ['DISCORD_CLIENT_ID', 'abc'],
    ['DISCORD_CLIENT_ID', '123456789012345678901'],
    ['DATABASE_POOL_SIZE', '0'],
    ['HTTP_REQUEST_TIMEOUT_MS', '999'],
    ['HTTP_REQUEST_TIMEOUT_MS', 'slow'],
    ['PLATFORM_TIMEOUT_MS', '50'],
    ['PLATFORM_TIMEOUT_MS', 'fast'],
    ['PLATFORM_INVALID_REQUEST_LIMIT', '0'],
    ['PLATFORM_INVALID_REQUEST_LIMIT', '10000'],
    ['PLATFORM_INVALID_REQUEST_LIMIT', 'many'],
    ['PLATFORM_QUEUE_MAX_WAIT_MS', '99'],
    ['PLATFORM_QUEUE_MAX_WAIT_MS', '60001'],
    ['PLATFORM_QUEUE_MAX_WAIT_MS', 'soon'],
    ['PLATFORM_CACHE_TTL', '0'],
    ['PLATFORM_CACHE_TTL', '301'],
    ['USER_GUILDS_CACHE_TTL', '0'],
    ['USER_GUILDS_CACHE_TTL', 'a day'],
    ['BOT_FEED_STALE_AFTER', '9'],
    ['BOT_FEED_STALE_AFTER', '3601'],
    ['BOT_FEED_STALE_AFTER', 'soon'],
    ['GUILD_STATE_FEED', 'maybe'],
    ['GUILD_STATE_MAX_AGE', '9'],
    ['GUILD_STATE_MAX_AGE', '86401'],
    ['GUILD_STATE_CACHE_MB', '0'],
    ['GUILD_STATE_CACHE_MB', '4097'],
    ['EMULATOR_RATE_LIMITS', 'sometimes'],
    ['DEMO_BOT_REPORTER', 'later'],
    ['RATE_LIMIT_ANONYMOUS', '60'],
    ['RATE_LIMIT_ANONYMOUS', '0/60'],
    ['RATE_LIMIT_GUILD_INFO', '30/0'],
    ['RATE_LIMIT_SETTINGS_WRITE', '-1/60'],
    ['RATE_LIMIT_BOT_FEED', '0/60'],
    ['RATE_LIMIT_INVALID_TOKEN', '20 per minute'],
    ['OAUTH2_ALLOWED_REDIRECTS', 'https://ok.example/cb,javascript:alert(1)'],
    ['MAIN_SERVER', 'main'],
    ['SUPPORT_SERVER_INVITE', 'discord.gg/abc'],
    ['LOGIN_SESSION_TTL', '59'],
    ['LOGIN_SESSION_TTL', 'week'],
    ['API_TOKEN_MAX_TTL', '0'],
    ['MAX_API_TOKENS_PER_USER', '0'],
    ['MAX_API_TOKENS_PER_USER', '1001'],
    ['ROOT_USERS', '1,two,3'],
    ['TOKEN_ENCRYPTION_KEY', 'c2hvcnQ='],
    ['TOKEN_ENCRYPTION_KEY', '!!!not base64!!!'],
    ['TRUST_PROXY', 'maybe'],
    ['RATE_LIMITS_ENABLED', '2'],
    ['LOG_LEVEL', 'verbose'],
    ['METRICS_PORT', '-1'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', 'nine'],
    ['METRICS_TOKEN', 'too-short-for-a-secret'],
  ])('refuses %s=%s with one line naming the variable', (name, value) => {
    const message = configError(memory({ [name]: value }));
    expect(message).toMatch(/^Invalid configuration: /);
    expect(message).toContain(name);
    expect(message).not.toContain('\n');
    // Values are not echoed: a mistyped secret must not end up in a log.
    if (value.length > 3) expect(message).not.toContain(value);
  });

  it('turns metrics on with METRICS_PORT, on loopback unless METRICS_HOST says otherwise', () => {
    expect(loadConfig(memory()).metrics).toEqual({ port: null, host: '127.0.0.1', token: null });
    const token = 'x'.repeat(32);
    expect(
      loadConfig(memory({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: token }))
        .metrics,
    ).toEqual({ port: 9464, host: '0.0.0.0', token });
  });

  describe('TRUST_PROXY', () => {
    it.each([
      ['', false],
      ['0', false],
      ['false', false],
      ['FALSE', false],
      ['1', 1],
      [' 3 ', 3],
      ['10', 10],
      ['127.0.0.1', ['127.0.0.1']],
      ['10.0.0.0/8', ['10.0.0.0/8']],
      ['10.0.0.1, 192.168.0.0/16', ['10.0.0.1', '192.168.0.0/16']],
      ['::1', ['::1']],
      ['fd00:ab::/32,2001:db8::1/128', ['fd00:ab::/32', '2001:db8::1/128']],
      ['172.16.0.0/12,::ffff:10.0.0.1', ['172.16.0.0/12', '::ffff:10.0.0.1']],
      ['10.0.0.1/32', ['10.0.0.1/32']],
      ['loopback,uniquelocal', ['loopback', 'uniquelocal']],
      ['10.0.0.0/8,2001:db8::/16', ['10.0.0.0/8', '2001:db8::/16']],
      ['::ffff:10.0.0.0/104', ['::ffff:10.0.0.0/104']],
      ['::ffff:a00:0/104', ['::ffff:a00:0/104']],
      ['2001:DB8::/32', ['2001:db8::/32']],
    ])('reads %p as %p', (value, expected) => {
      expect(loadConfig(memory({ TRUST_PROXY: value })).http.trustProxy).toEqual(expected);
    });

    const everything =
      /^Invalid configuration: TRUST_PROXY no longer trusts every X-Forwarded-For .*hop count.*addresses\/CIDRs/;
    const malformed =
      /^Invalid configuration: TRUST_PROXY must be false, a hop count from 1 to 10, or IP addresses\/CIDRs/;
    const hops = /^Invalid configuration: TRUST_PROXY as a hop count must be from 1 to 10$/;
    it.each([
      ['true', everything],
      ['TRUE', everything],
      ['yes', everything],
      ['on', everything],
      ['all', everything],
      ['*', everything],
      ['-1', hops],
      ['11', hops],
      ['1.5', malformed],
      ['maybe', malformed],
      ['10.0.0', malformed],
      ['256.0.0.1', malformed],
      ['10.0.0.0/33', malformed],
      ['10.0.0.0/0', malformed],
      ['0.0.0.0/0', malformed],
      ['::/0', malformed],
      ['fd00::/129', malformed],
      ['10.0.0.0/8/8', malformed],
      ['10.0.0.0/x', malformed],
      ['10.0.0.0/', malformed],
      ['10.0.0.1,', malformed],
      ['10.0.0.1,,10.0.0.2', malformed],
      ['10.0.0.1 10.0.0.2', malformed],
      ['proxy.internal', malformed],
      ['10.0.0.0/255.0.0.0', malformed],
    ])('refuses %p at boot, saying what to set instead', (value, message) => {
      expect(configError(memory({ TRUST_PROXY: value }))).toMatch(message);
    });

    // Ranges that hold (nearly) every address would let clients inside them pick their own.
    const wide =
      /^Invalid configuration: TRUST_PROXY ranges must be narrow .*IPv4 at least \/8, IPv6 at least \/16, IPv4-mapped IPv6 at least \/104.*only the proxies' own addresses/;
    const zone = /^Invalid configuration: TRUST_PROXY addresses must not carry a zone id \(%…\)/;
    it.each([
      ['0.0.0.0/1,128.0.0.0/1', wide],
      ['10.0.0.1,0.0.0.0/7', wide],
      ['0.0.0.0/1', wide],
      ['::/1,8000::/1', wide],
      ['2000::/3', wide],
      ['2001:db8::/15', wide],
      ['fd00::/8', wide],
      ['::ffff:0:0/96', wide],
      ['::ffff:0.0.0.0/96', wide],
      ['::FFFF:0:0/96', wide],
      ['::ffff:10.0.0.0/103', wide],
      ['::ffff:0:0/97', wide],
      ['::/16', wide],
      ['::/80', wide],
      ['0:0:0:0:0:ffff::/90', wide],
      ['fe80::1%eth0', zone],
      ['fe80::%1/64', zone],
      ['10.0.0.1,fe80::1%25eth0', zone],
    ])('refuses %p at boot: it would trust clients to name themselves', (value, message) => {
      const error = configError(memory({ TRUST_PROXY: value }));
      expect(error).toMatch(message);
      expect(error).not.toContain('\n');
    });
  });

  it('names every bad variable at once', () => {
    const message = configError(memory({ PORT: 'x', LOG_LEVEL: 'loud' }));
    expect(message).toContain('PORT');
    expect(message).toContain('LOG_LEVEL');
  });

  it('requires TOKEN_ENCRYPTION_KEY with PostgreSQL', () => {
    expect(configError({ DATABASE_URL: 'postgres://db/bms' })).toContain('TOKEN_ENCRYPTION_KEY');
  });

  it('refuses DATABASE_POOL_SIZE with the embedded database (it has one connection)', () => {
    expect(configError(memory({ DATABASE_POOL_SIZE: '5' }))).toContain(
      'DATABASE_POOL_SIZE applies to PostgreSQL only',
    );
  });

  it('requires the OAuth2 client id and secret with a real bot token', () => {
    const message = configError(memory({ DISCORD_BOT_TOKEN: 'token' }));
    expect(message).toContain('DISCORD_CLIENT_ID');
    expect(message).toContain('DISCORD_CLIENT_SECRET');
  });

  it('stores the embedded database under DATA_DIR and generates the key there once', () => {
    const cwd = workDir();
    const first = loadConfig({ DATA_DIR: 'state' }, cwd);
    expect(first.database).toEqual({ engine: 'pglite', directory: join(cwd, 'state', 'pglite') });
    const keyFile = join(cwd, 'state', 'token-encryption.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64')).toEqual(
      first.tokenEncryptionKey,
    );
    const second = loadConfig({ DATA_DIR: 'state' }, cwd);
    expect(second.tokenEncryptionKey).toEqual(first.tokenEncryptionKey);
  });

  it('refuses a damaged key file instead of replacing it', () => {
    const cwd = workDir();
    loadConfig({}, cwd);
    writeFileSync(join(cwd, '.data', 'token-encryption.key'), 'short\n');
    expect(() => loadConfig({}, cwd)).toThrow(ConfigError);
  });

  it('prefers TOKEN_ENCRYPTION_KEY over a key file', () => {
    const cwd = workDir();
    loadConfig({}, cwd);
    const config = loadConfig({ TOKEN_ENCRYPTION_KEY: KEY }, cwd);
    expect(config.tokenEncryptionKey.equals(Buffer.from(KEY, 'base64'))).toBe(true);
  });

  it.each([
    ['3000', 'http://localhost:3000/docs/oauth2-redirect.html'],
    ['4100', 'http://localhost:4100/docs/oauth2-redirect.html'],
    // Any free port: known only once bound, so the default port's.
    ['0', 'http://localhost:3000/docs/oauth2-redirect.html'],
  ])(
    'allows the docs page on PORT=%s as the redirect URI unless OAUTH2_ALLOWED_REDIRECTS is set',
    (port, redirect) => {
      expect(loadConfig({ PORT: port, DATABASE_URL: 'memory://' }).oauth2.allowedRedirects).toEqual(
        [redirect],
      );
    },
  );
});
