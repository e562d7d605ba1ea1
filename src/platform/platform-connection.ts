import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { PlatformEmulator } from 'src/platform/emulator/platform-emulator';

/**
 * Where the platform is and how to authenticate to it: the configured Discord, or, in demo mode
 * (no `DISCORD_BOT_TOKEN`), the built-in emulator started on a loopback port.
 */
export class PlatformConnection implements OnApplicationBootstrap, OnApplicationShutdown {
  private constructor(
    readonly apiUrl: string,
    readonly botToken: string,
    readonly clientId: string,
    readonly clientSecret: string,
    /** The running emulator in demo mode; null when talking to the real platform. */
    readonly emulator: PlatformEmulator | null,
  ) {}

  static async open(config: AppConfig): Promise<PlatformConnection> {
    const { platform } = config;
    if (platform.botToken !== null) {
      return new PlatformConnection(
        platform.apiUrl,
        platform.botToken,
        platform.clientId,
        platform.clientSecret,
        null,
      );
    }
    // Off by default: a demo answers at once; on, it meets the platform's limits as production does.
    const emulator = await PlatformEmulator.start(
      DEMO_SEED,
      {},
      platform.emulatorRateLimits ? { rateLimits: {} } : {},
    );
    const { application } = DEMO_SEED;
    return new PlatformConnection(
      emulator.apiUrl,
      application.bot_token,
      application.id,
      application.secret,
      emulator,
    );
  }

  /** Logged once the application logger is in place. */
  onApplicationBootstrap(): void {
    if (!this.emulator) return;
    new Logger(PlatformConnection.name).log(
      `Demo mode: DISCORD_BOT_TOKEN is not set, so the built-in chat-platform emulator at ${this.emulator.apiUrl} stands in for Discord (demo guild ${DEMO_IDS.community}; get a login code from GET /demo/oauth2-code)`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.emulator?.close();
  }
}
