import { Command, CommandRunner, Option } from 'nest-commander';
import { CommandSyncService } from 'src/commands/command-sync.service';
import { hasChanges, type SyncPlan } from 'src/commands/command-sync';
import { CliServices } from 'src/common/cli/cli-services';

interface SyncOptions {
  dryRun?: boolean;
}

@Command({
  name: 'commands:sync',
  description: "Install the bot's command catalog on the platform and report what changed",
})
export class SyncCommandsCommand extends CommandRunner {
  constructor(private readonly services: CliServices) {
    super();
  }

  async run(_arguments: string[], options: SyncOptions): Promise<void> {
    const dryRun = options.dryRun === true;
    const commandSync = await this.services.get(CommandSyncService);
    const plan = await commandSync.sync(!dryRun);
    for (const line of describePlan(plan)) console.log(line);
    if (!hasChanges(plan)) console.log('The platform already has the catalog; nothing was sent.');
    else if (dryRun) console.log('Dry run: nothing was sent.');
    else console.log('The catalog was installed.');
  }

  @Option({ flags: '--dry-run', description: 'only report what would change' })
  parseDryRun(): boolean {
    return true;
  }
}

export function describePlan(plan: SyncPlan): string[] {
  return (['added', 'updated', 'removed', 'unchanged'] as const)
    .filter((kind) => plan[kind].length > 0)
    .map((kind) => `${kind} (${plan[kind].length}): ${plan[kind].join(', ')}`);
}
