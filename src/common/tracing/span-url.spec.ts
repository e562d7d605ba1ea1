import { templatedUrl } from 'src/common/tracing/span-url';

describe('templatedUrl', () => {
  const base = 'https://discord.com/api/v10';
  it.each([
    [
      'a member lookup, by its route',
      `${base}/guilds/81384788765712384/members/80351110224678912`,
      '/guilds/:guild_id/members/:user_id',
      `${base}/guilds/{guild_id}/members/{user_id}`,
    ],
    [
      'a guild, by its route',
      `${base}/guilds/81384788765712384`,
      '/guilds/:guild_id',
      `${base}/guilds/{guild_id}`,
    ],
    ['a route without parameters', `${base}/users/@me`, '/users/@me', `${base}/users/@me`],
    [
      'the query string dropped',
      `${base}/users/@me/guilds?after=81384788765712384&limit=200`,
      '/users/@me/guilds',
      `${base}/users/@me/guilds`,
    ],
    [
      'the REST proxy as base',
      'http://discord-proxy:8080/api/v10/guilds/1/members/2',
      '/guilds/:guild_id/members/:user_id',
      'http://discord-proxy:8080/api/v10/guilds/{guild_id}/members/{user_id}',
    ],
    [
      'no route: every snowflake segment',
      `${base}/guilds/81384788765712384/members/80351110224678912`,
      undefined,
      `${base}/guilds/{id}/members/{id}`,
    ],
    [
      'a route the path does not end with: every snowflake segment',
      `${base}/guilds/81384788765712384/channels`,
      '/guilds/:guild_id/members/:user_id',
      `${base}/guilds/{id}/channels`,
    ],
    ['a path without origin', '/guilds/5/members/6', undefined, '/guilds/{id}/members/{id}'],
  ])('%s', (_name, url, route, expected) => {
    expect(templatedUrl(url, route)).toBe(expected);
  });
});
