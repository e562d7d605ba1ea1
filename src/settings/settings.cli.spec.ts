import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from 'src/common/cli/cli-arguments';
import { CliServices } from 'src/common/cli/cli-services';
import { counted, ImportSettingsCommand } from 'src/settings/settings.cli';

const GUILD = '1100000000000000100';
const DOCUMENT = {
  format: 'bot-management-service/settings',
  version: 1,
  guild_id: GUILD,
  exported_at: '2026-11-24T00:00:00.000Z',
  revision: 0,
  settings: {},
};

describe('settings:import with a bad file', () => {
  const folder = mkdtempSync(join(tmpdir(), 'settings-import-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  // A bad file is refused before the service's modules (the database) start.
  const start = jest.fn(() => Promise.reject(new Error('the services must not start')));
  const fileWith = (name: string, text: string): string => {
    const file = join(folder, name);
    writeFileSync(file, text);
    return file;
  };
  const documentWith = (settings: string): string =>
    JSON.stringify(DOCUMENT).replace('"settings":{}', `"settings":${settings}`);

  it.each<[string, () => string, RegExp]>([
    ['a missing file', () => join(folder, 'missing.json'), /^.+missing\.json cannot be read: /],
    ['a folder', () => folder, /cannot be read: /],
    ['a file that is not JSON', () => fileWith('text.json', 'settings, please'), /is not JSON: /],
    ['an empty file', () => fileWith('empty.json', ''), /is not JSON: /],
    ['JSON that is not an object', () => fileWith('list.json', '[1]'), /^document/],
    [
      'a row with constructor.prototype',
      () =>
        fileWith('ctor.json', documentWith('{"guildroles":[{"constructor":{"prototype":{}}}]}')),
      /ctor\.json uses the key "constructor", which no export document holds/,
    ],
    [
      'a setting named constructor',
      () => fileWith('ctor-setting.json', documentWith('{"constructor":[]}')),
      /uses the key "constructor"/,
    ],
    [
      'a row with __proto__',
      () => fileWith('proto.json', documentWith('{"guildroles":[{"__proto__":{"x":1}}]}')),
      /proto\.json uses the key "__proto__"/,
    ],
    [
      'settings that are not arrays of objects',
      () => fileWith('shape.json', documentWith('{"guildroles":[1]}')),
      /^document\.settings: document\.settings must be an object of setting ids to arrays of entries/,
    ],
  ])('refuses %s with one message and no stack', async (_name, file, message) => {
    const run = new ImportSettingsCommand(new CliServices(start)).run([GUILD, file()], {});
    const error: unknown = await run.then(
      () => null,
      (refusal: unknown) => refusal,
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toMatch(message);
    expect((error as CliError).message).not.toContain('\n    at ');
    expect(start).not.toHaveBeenCalled();
  });
});

describe('counted', () => {
  it.each([
    [0, 'entry', 'entries', '0 entries'],
    [1, 'entry', 'entries', '1 entry'],
    [2, 'entry', 'entries', '2 entries'],
    [1, 'setting', undefined, '1 setting'],
    [6, 'setting', undefined, '6 settings'],
  ])('%i %s', (count, one, many, expected) => {
    expect(counted(count, one, many)).toBe(expected);
  });
});
