const CDN = 'https://cdn.discordapp.com';

/** The CDN URL of a guild icon: animated icons (`a_` hashes) as GIF, others as PNG; null for none. */
export function guildIconUrl(guildId: string, hash: string | null | undefined): string | null {
  if (!hash) return null;
  const extension = hash.startsWith('a_') ? 'gif' : 'png';
  return `${CDN}/icons/${guildId}/${hash}.${extension}`;
}
