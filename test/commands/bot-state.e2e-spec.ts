import { COMMAND_NAMES } from 'src/commands/command-catalog';
import { CommandSyncService } from 'src/commands/command-sync.service';
import { emulatorOf } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

const COMMAND_KEYS = [
  'description',
  'description_localizations',
  'integration_types',
  'name',
  'name_localizations',
  'nsfw',
  'options',
  'type',
];
const OPTION_KEYS = [
  'autocomplete',
  'channel_types',
  'choices',
  'description',
  'description_localizations',
  'max_length',
  'max_value',
  'min_length',
  'min_value',
  'name',
  'name_localizations',
  'options',
  'required',
  'type',
];

interface Option {
  options: Option[];
  choices: Record<string, unknown>[];
  [key: string]: unknown;
}

function allOptions(options: Option[]): Option[] {
  return options.flatMap((option) => [option, ...allOptions(option.options)]);
}

describe('GET /bot-state', () => {
  const t = useTestApp();

  it('serves the catalog in the spec shape, to anyone, with caching headers', async () => {
    const res = await t().http().get('/bot-state').expect(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(res.headers['cache-control']).toBe('public, max-age=300, must-revalidate');
    const commands = res.body.commands as (Record<string, unknown> & { options: Option[] })[];
    expect(commands.map((c) => c.name)).toEqual(COMMAND_NAMES);
    for (const command of commands) {
      expect(Object.keys(command).sort()).toEqual(COMMAND_KEYS);
      for (const option of allOptions(command.options)) {
        expect(Object.keys(option).sort()).toEqual(OPTION_KEYS);
        for (const choice of option.choices) {
          expect(Object.keys(choice).sort()).toEqual(['name', 'name_localizations', 'value']);
        }
      }
    }
  });

  it('renders a command completely', async () => {
    const res = await t().http().get('/bot-state').expect(200);
    const kick = (res.body.commands as { name: string }[]).find((c) => c.name === 'kick');
    expect(kick).toEqual({
      name: 'kick',
      name_localizations: { de: 'kicken', fr: 'expulser' },
      description: 'Remove a member from the server; they can join again',
      description_localizations: {},
      integration_types: [0],
      nsfw: false,
      type: 1,
      options: [
        {
          name: 'user',
          name_localizations: { de: 'nutzer', fr: 'membre', 'es-ES': 'usuario' },
          description: 'The member to kick',
          description_localizations: {},
          autocomplete: false,
          channel_types: [],
          choices: [],
          max_length: null,
          min_length: null,
          max_value: null,
          min_value: null,
          required: true,
          type: 6,
          options: [],
        },
        expect.objectContaining({ name: 'reason', type: 3, max_length: 512, required: false }),
      ],
    });
    const menu = (res.body.commands as { name: string; type: number }[]).find(
      (c) => c.name === 'Whois',
    );
    expect(menu).toMatchObject({ type: 2, description: '', options: [] });
  });

  it.each([
    ['the same tag', (etag: string) => etag],
    ['the weak form of the tag', (etag: string) => `W/${etag}`],
    ['a list holding the tag', (etag: string) => `"other", ${etag}`],
    ['any tag', () => '*'],
  ])('answers 304 without a body for If-None-Match with %s', async (_name, header) => {
    const { etag } = (await t().http().get('/bot-state').expect(200)).headers as { etag: string };
    const res = await t().http().get('/bot-state').set('If-None-Match', header(etag)).expect(304);
    expect(res.text ?? '').toBe('');
    expect(res.headers.etag).toBe(etag);
  });

  // fetch() adds `Cache-Control: no-cache` to every request carrying `If-None-Match`; that
  // directive addresses caches, and an origin server evaluates the condition regardless.
  it.each([
    ['Cache-Control: no-cache', { 'Cache-Control': 'no-cache' }],
    ['Cache-Control: no-cache, max-age=0', { 'Cache-Control': 'no-cache, max-age=0' }],
    ['Pragma: no-cache', { Pragma: 'no-cache' }],
    ['Cache-Control: no-store', { 'Cache-Control': 'no-store' }],
  ])('answers 304 for a matching If-None-Match sent with %s', async (_name, extra) => {
    const { etag } = (await t().http().get('/bot-state').expect(200)).headers as { etag: string };
    const res = await t()
      .http()
      .get('/bot-state')
      .set({ 'If-None-Match': etag, ...extra })
      .expect(304);
    expect(res.text ?? '').toBe('');
    expect(res.headers.etag).toBe(etag);
  });

  it('answers 200 for a tag that does not match', async () => {
    const res = await t().http().get('/bot-state').set('If-None-Match', '"stale"').expect(200);
    expect(res.body.commands.length).toBe(COMMAND_NAMES.length);
  });

  it('answers HEAD with the headers only', async () => {
    const res = await t().http().head('/bot-state').expect(200);
    expect(res.headers.etag).toMatch(/^"/);
    expect(res.text ?? '').toBe('');
  });
});

describe('command sync against the platform', () => {
  const t = useTestApp();

  it('installs the catalog once and then finds nothing to change', async () => {
    const emulator = emulatorOf(t());
    const sync = t().app.get(CommandSyncService);
    const puts = (): number => emulator.countRequests('PUT /applications/:application_id/commands');

    const dryRun = await sync.sync(false);
    expect(dryRun.added).toHaveLength(COMMAND_NAMES.length);
    expect(puts()).toBe(0);

    const first = await sync.sync(true);
    expect(first.added).toEqual(dryRun.added);
    expect(puts()).toBe(1);
    const installed = emulator.state.listCommands();
    expect(installed.map((c) => c.name)).toEqual(COMMAND_NAMES);

    const second = await sync.sync(true);
    expect(second).toEqual({ added: [], updated: [], removed: [], unchanged: first.added });
    expect(puts()).toBe(1);
  });

  it('reports updated and removed commands and replaces them', async () => {
    const emulator = emulatorOf(t());
    const current = emulator.state.listCommands();
    emulator.state.replaceCommands([
      ...current.map((c) => (c.name === 'ban' ? { ...c, description: 'Old text' } : c)),
      { name: 'legacy', description: 'A command the catalog dropped' },
    ] as never);
    const plan = await t().app.get(CommandSyncService).sync(true);
    expect(plan.updated).toEqual(['/ban']);
    expect(plan.removed).toEqual(['/legacy']);
    expect(plan.added).toEqual([]);
    expect(emulator.state.listCommands().map((c) => c.name)).toEqual(COMMAND_NAMES);
  });
});
