/**
 * The URL a client span names (`url.full`), written as its route's template: the path's ids become
 * the route's parameter names (`/guilds/{guild_id}/members/{user_id}`), so a span never ties a user
 * to a guild (docs/operations.md, "What a trace holds"). The query string is dropped. Without a
 * route, or one the path does not end with, every all-digit segment (a snowflake) becomes `{id}`.
 */
export function templatedUrl(url: string, route?: string): string {
  const withoutQuery = url.split(/[?#]/, 1)[0] ?? url;
  const { origin, path } = splitOrigin(withoutQuery);
  const segments = path.split('/');
  const template = route?.split('/').filter((part) => part !== '') ?? [];
  if (template.length > 0 && template.length <= segments.length) {
    const tail = segments.slice(segments.length - template.length);
    if (template.every((part, i) => part.startsWith(':') || part === tail[i])) {
      const named = template.map((part) => (part.startsWith(':') ? `{${part.slice(1)}}` : part));
      return origin + [...segments.slice(0, segments.length - template.length), ...named].join('/');
    }
  }
  return origin + segments.map((part) => (/^\d+$/.test(part) ? '{id}' : part)).join('/');
}

function splitOrigin(url: string): { origin: string; path: string } {
  const scheme = url.indexOf('://');
  if (scheme === -1) return { origin: '', path: url };
  const slash = url.indexOf('/', scheme + 3);
  return slash === -1
    ? { origin: url, path: '' }
    : { origin: url.slice(0, slash), path: url.slice(slash) };
}
