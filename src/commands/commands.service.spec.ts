import { Test } from '@nestjs/testing';
import { COMMAND_CATALOG } from 'src/commands/command-catalog';
import {
  COMMAND_DECLARATIONS,
  CommandsService,
  InvalidCatalogError,
} from 'src/commands/commands.service';

function boot(catalog: unknown): Promise<CommandsService> {
  return Test.createTestingModule({
    providers: [{ provide: COMMAND_DECLARATIONS, useValue: catalog }, CommandsService],
  })
    .compile()
    .then((module) => module.get(CommandsService));
}

describe('CommandsService', () => {
  it('stops the boot on a bad declaration, naming the command and the rule', async () => {
    const bad = [
      ...COMMAND_CATALOG,
      { name: 'Broken Command', description: 'Has a space and capitals' },
    ];
    const failure = boot(bad);
    await expect(failure).rejects.toBeInstanceOf(InvalidCatalogError);
    await expect(failure).rejects.toThrow(
      'Broken Command: name "Broken Command" must be 1 to 32 letters, digits, "-" or "_"',
    );
  });

  it('boots with the shipped catalog and a strong entity tag of the served document', async () => {
    const service = await boot(COMMAND_CATALOG);
    expect(service.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const document = JSON.parse(service.botStateJson) as { commands: { name: string }[] };
    expect(document.commands.map((c) => c.name)).toEqual(COMMAND_CATALOG.map((c) => c.name));
  });

  it('derives a different tag for a different catalog', async () => {
    const one = await boot(COMMAND_CATALOG);
    const other = await boot(COMMAND_CATALOG.slice(1));
    expect(other.etag).not.toBe(one.etag);
  });
});
