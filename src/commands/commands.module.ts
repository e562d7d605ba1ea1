import { Module } from '@nestjs/common';
import { COMMAND_CATALOG } from 'src/commands/command-catalog';
import { CommandSyncService } from 'src/commands/command-sync.service';
import { CommandsController } from 'src/commands/commands.controller';
import { CommandsSetting } from 'src/commands/commands.setting';
import { COMMAND_DECLARATIONS, CommandsService } from 'src/commands/commands.service';
import { Feature } from 'src/common/feature/feature.decorator';

/** The bot's built-in command catalog: `GET /bot-state` and the platform sync. */
@Feature({
  tags: { commands: "The bot's command catalog" },
  commands: () => import('./commands.cli').then((m) => [m.SyncCommandsCommand]),
})
@Module({
  controllers: [CommandsController],
  providers: [
    { provide: COMMAND_DECLARATIONS, useValue: COMMAND_CATALOG },
    CommandsService,
    CommandSyncService,
    CommandsSetting,
  ],
  exports: [CommandsService, CommandSyncService],
})
export class CommandsModule {}
