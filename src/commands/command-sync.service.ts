import { Injectable } from '@nestjs/common';
import type { RESTPutAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { CommandsService } from 'src/commands/commands.service';
import { hasChanges, planSync, type SyncPlan } from 'src/commands/command-sync';
import { PlatformClient } from 'src/platform/platform.client';

/** Installs the catalog as the application's global commands (one bulk overwrite). */
@Injectable()
export class CommandSyncService {
  constructor(
    private readonly commands: CommandsService,
    private readonly platform: PlatformClient,
  ) {}

  /** What a sync would change; with `apply`, also makes the change (only if there is one). */
  async sync(apply: boolean): Promise<SyncPlan> {
    const plan = planSync(this.commands.catalog, await this.platform.getCommands());
    if (apply && hasChanges(plan)) {
      await this.platform.putCommands(
        this.commands.catalog as RESTPutAPIApplicationCommandsJSONBody,
      );
    }
    return plan;
  }
}
