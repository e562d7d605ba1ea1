import { CommandFactory } from 'nest-commander';
import { CliModule } from 'src/cli.module';
import { CliError } from 'src/common/cli/cli-arguments';
import { ConfigError, loadConfig, readProcessEnvironment } from 'src/config/app-config';

/** `npm run cli -- <command>`: the admin CLI (docs/operations.md, "Admin CLI"). */
async function main(): Promise<void> {
  const config = loadConfig(readProcessEnvironment());
  await CommandFactory.run(CliModule.forRoot(config), {
    logger: ['error', 'warn'],
    errorHandler: (error) => fail(error),
    serviceErrorHandler: (error) => fail(error),
  });
}

function fail(error: unknown): never {
  const commander = (error as { code?: unknown }).code;
  if (typeof commander === 'string' && commander.startsWith('commander.')) {
    // Commander has printed its own message (or the help).
    process.exit(commander === 'commander.helpDisplayed' || commander === 'commander.help' ? 0 : 1);
  }
  const known = error instanceof CliError || error instanceof ConfigError;
  console.error(known ? `Error: ${error.message}` : error);
  process.exit(1);
}

main().catch(fail);
