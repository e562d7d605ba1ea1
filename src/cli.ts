import { CommandFactory } from 'nest-commander';
import { CLI_LOG_LEVELS, CliModule, cliCommands } from 'src/cli.module';
import { CliError } from 'src/common/cli/cli-arguments';
import { ConfigError, loadConfig, readProcessEnvironment } from 'src/config/app-config';

/** `npm run cli -- <command>`: the admin CLI (docs/operations.md, "Admin CLI"). */
async function main(): Promise<void> {
  const config = loadConfig(readProcessEnvironment());
  await CommandFactory.run(CliModule.forRoot(config, await cliCommands()), {
    logger: CLI_LOG_LEVELS,
    // Help, an unknown command or a wrong argument: commander has printed it, and nothing is open.
    errorHandler: (error) => process.exit((error as { exitCode?: number }).exitCode ?? 1),
    serviceErrorHandler: report,
  });
}

/**
 * A command that failed: one line for what the CLI expects to go wrong, the stack otherwise. The
 * CLI then closes as after a success (the embedded database is flushed and released) and exits 1.
 */
function report(error: unknown): void {
  const known = error instanceof CliError || error instanceof ConfigError;
  console.error(known ? `Error: ${error.message}` : error);
  process.exitCode = 1;
}

main().catch(report);
