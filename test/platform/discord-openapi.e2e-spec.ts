import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DISCORD_SPEC_ALLOWLIST } from 'test/fixtures/discord-openapi/allowlist';
import { DISCORD_SPEC_DIR, DiscordSpec, discordDocument } from 'test/support/discord-spec';

/** The pinned copy of Discord's OpenAPI document is the one its pin names, and its allowlist is still needed. */

const pin = JSON.parse(readFileSync(join(DISCORD_SPEC_DIR, 'pin.json'), 'utf8')) as {
  repository: string;
  path: string;
  commit: string;
  blob: string;
};

describe("the pinned copy of Discord's OpenAPI document", () => {
  it('is, byte for byte, the file of the commit its pin and README name', () => {
    const bytes = readFileSync(join(DISCORD_SPEC_DIR, 'openapi.json'));
    // git's blob id (`git hash-object`), as `git ls-tree <commit> specs/openapi.json` shows it.
    const blob = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
    expect(blob).toBe(pin.blob);
    expect(pin).toMatchObject({
      repository: 'discord/discord-api-spec',
      path: 'specs/openapi.json',
    });
    expect(pin.commit).toMatch(/^[0-9a-f]{40}$/);
    const readme = readFileSync(join(DISCORD_SPEC_DIR, 'README.md'), 'utf8');
    expect(readme).toContain(`Commit: \`${pin.commit}\``);
  });

  it('travels with its licence', () => {
    const licence = readFileSync(join(DISCORD_SPEC_DIR, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License/);
    expect(licence).toContain('Discord');
  });

  it('is OpenAPI 3.1 and describes every route the service calls', () => {
    const document = discordDocument();
    expect(document.openapi).toMatch(/^3\.1\./);
    const spec = DiscordSpec.get();
    for (const [method, path] of [
      ['GET', '/users/@me'],
      ['GET', '/users/@me/guilds'],
      ['GET', '/users/@me/guilds/{guild_id}/member'],
      ['GET', '/guilds/{guild_id}'],
      ['GET', '/guilds/{guild_id}/channels'],
      ['GET', '/guilds/{guild_id}/threads/active'],
      ['GET', '/guilds/{guild_id}/members/{user_id}'],
      ['GET', '/applications/{application_id}/commands'],
      ['PUT', '/applications/{application_id}/commands'],
    ]) {
      expect([method, path, spec.describes(method, path)]).toEqual([method, path, true]);
    }
  });
});

it('the validator refuses an answer without a required field, naming it', () => {
  const spec = DiscordSpec.get();
  const channel = { id: '1', type: 0, flags: 0, guild_id: '2', position: 0 };
  expect(spec.checkSchema('GuildChannelResponse', { ...channel, name: 'general' })).toEqual([]);
  expect(spec.checkSchema('GuildChannelResponse', channel)).toEqual([
    expect.objectContaining({ at: '', message: expect.stringContaining("'name'") }),
  ]);
});

describe("the allowlist of the document's known differences from Discord's docs", () => {
  it.each(DISCORD_SPEC_ALLOWLIST.map((entry) => [entry.schema, entry]))(
    '%s: still needed (the published document refuses its example, the widened one accepts it)',
    (schema, entry) => {
      expect(entry.why.length).toBeGreaterThan(20);
      expect(
        DiscordSpec.get({ allowlisted: false }).checkSchema(schema, entry.example),
      ).not.toEqual([]);
      expect(DiscordSpec.get().checkSchema(schema, entry.example)).toEqual([]);
    },
  );

  it('a guild with a feature the docs list and the document does not is valid once allowlisted', () => {
    const features = ['COMMUNITY', 'SOUNDBOARD', 'GUILD_TAGS'];
    const published = DiscordSpec.get({ allowlisted: false });
    const partial = {
      id: '1',
      name: 'g',
      icon: null,
      banner: null,
      owner: false,
      permissions: '0',
      features,
    };
    expect(published.checkSchema('MyGuildResponse', partial)).not.toEqual([]);
    expect(DiscordSpec.get().checkSchema('MyGuildResponse', partial)).toEqual([]);
  });
});
