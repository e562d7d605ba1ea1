import { DEFAULT_REDIRECT_URI } from 'src/config/app-config';
import { ChannelType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import { DEMO_IDS, DEMO_SEED, EVERYONE_DEFAULT } from 'src/platform/emulator/demo.seed';
import type { EmulatorSeed } from 'src/platform/emulator/emulator.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';

/** The bench guild: large enough that permission resolution and the settings View have work to do. */
export const BENCH_IDS = {
  guild: '1100000000000000400',
  owner: '1100000000000000016',
  /** Holds 10 of the guild's 100 roles. */
  member: '1100000000000000015',
} as const;

/** The bench guild's roles: ids …401 to …500, positions 1 to 100. */
export const BENCH_ROLE_IDS: readonly string[] = Array.from({ length: 100 }, (_, i) =>
  (BigInt(BENCH_IDS.guild) + BigInt(i + 1)).toString(),
);

const BOT_ROLE = '1100000000000000501';

/** 100 roles with permissions, one channel, its owner, a member and the bot. */
const BENCH_GUILD: EmulatorSeed['guilds'][number] = {
  id: BENCH_IDS.guild,
  name: 'Bench Guild',
  icon: null,
  owner_id: BENCH_IDS.owner,
  roles: [
    { id: BENCH_IDS.guild, name: '@everyone', permissions: EVERYONE_DEFAULT, position: 0 },
    ...BENCH_ROLE_IDS.map((id, i) => ({
      id,
      name: `Role ${i + 1}`,
      permissions: (P.ViewChannel | P.SendMessages).toString(),
      position: i + 1,
    })),
    {
      id: BOT_ROLE,
      name: 'Demo Moderation Bot',
      permissions: P.Administrator.toString(),
      position: 101,
      managed: true,
      tags: { bot_id: DEMO_IDS.bot },
    },
  ],
  channels: [
    { id: '1100000000000000510', type: ChannelType.GuildText, name: 'bench', position: 0 },
  ],
  members: [
    { user_id: BENCH_IDS.owner, roles: [], joined_at: '2024-07-01T00:00:00.000Z' },
    {
      user_id: BENCH_IDS.member,
      roles: BENCH_ROLE_IDS.slice(0, 10),
      joined_at: '2024-07-02T00:00:00.000Z',
    },
    { user_id: DEMO_IDS.bot, roles: [BOT_ROLE], joined_at: '2024-07-03T00:00:00.000Z' },
  ],
};

/** The demo world with the bench guild and its two users added. */
const BENCH_SEED: EmulatorSeed = {
  ...DEMO_SEED,
  users: [
    ...DEMO_SEED.users,
    {
      id: BENCH_IDS.owner,
      username: 'erin',
      discriminator: '0',
      global_name: 'Erin',
      avatar: null,
    },
    {
      id: BENCH_IDS.member,
      username: 'frank',
      discriminator: '0',
      global_name: 'Frank',
      avatar: null,
    },
  ],
  guilds: [...DEMO_SEED.guilds, BENCH_GUILD],
};

/** The redirect the benchmarked services allow (service-process.ts). */
const REDIRECT = DEFAULT_REDIRECT_URI;

/**
 * The platform the benchmarked services talk to: an emulator serving the bench seed, which the
 * service reaches as it would the real platform (live mode, `DISCORD_API_URL`).
 */
export class BenchPlatform {
  private constructor(readonly emulator: PlatformEmulator) {}

  static async start(): Promise<BenchPlatform> {
    return new BenchPlatform(await PlatformEmulator.start(BENCH_SEED));
  }

  /** The environment that points a service at this platform. */
  serviceEnv(): Record<string, string> {
    const { application } = BENCH_SEED;
    return {
      DISCORD_BOT_TOKEN: application.bot_token,
      DISCORD_CLIENT_ID: application.id,
      DISCORD_CLIENT_SECRET: application.secret,
      DISCORD_API_URL: this.emulator.apiUrl,
    };
  }

  /** Logs `userId` (default: the demo user) in to the service at `baseUrl`; returns the token. */
  async loginToken(baseUrl: string, userId: string = DEMO_IDS.demoUser): Promise<string> {
    const code = this.emulator.issueCode({ userId, redirectUri: REDIRECT });
    const login = await fetch(`${baseUrl}/oauth2`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code, redirect_uri: REDIRECT }),
    });
    if (!login.ok) throw new Error(`login failed: ${login.status} ${await login.text()}`);
    return ((await login.json()) as { token: string }).token;
  }

  close(): Promise<void> {
    return this.emulator.close();
  }
}
