import { ChannelType } from 'discord-api-types/v10';
import { isThread } from 'src/guilds/platform-permissions';
import { compareSnowflakes } from 'src/common/validation/snowflake';

export interface OrderedChannel {
  id: string;
  type: number;
  position?: number;
  parent_id?: string | null;
}

const CATEGORY: number = ChannelType.GuildCategory;
const VOICE_TYPES: ReadonlySet<number> = new Set([
  ChannelType.GuildVoice,
  ChannelType.GuildStageVoice,
]);

/** Within one level: text-like channels before voice channels, then position, then age. */
function compareSiblings(a: OrderedChannel, b: OrderedChannel): number {
  const voiceA = VOICE_TYPES.has(a.type) ? 1 : 0;
  const voiceB = VOICE_TYPES.has(b.type) ? 1 : 0;
  if (voiceA !== voiceB) return voiceA - voiceB;
  const byPosition = (a.position ?? 0) - (b.position ?? 0);
  if (byPosition !== 0) return byPosition;
  return compareSnowflakes(a.id, b.id);
}

/**
 * Channels in the order the platform's client shows them: channels outside any category first,
 * then each category followed by its children; text-like before voice at each level, then by
 * position and age; each thread right after its parent (oldest first). Channels whose parent is
 * missing are placed as if they had none.
 */
export function displayOrder<T extends OrderedChannel>(channels: readonly T[]): T[] {
  const categories = new Set(channels.filter((c) => c.type === CATEGORY).map((c) => c.id));
  const placeable = new Set(channels.filter((c) => !isThread(c)).map((c) => c.id));
  const childrenOf = new Map<string | null, T[]>();
  const threadsOf = new Map<string, T[]>();
  const orphanThreads: T[] = [];
  for (const channel of channels) {
    const parent = channel.parent_id ?? null;
    if (isThread(channel)) {
      if (parent && placeable.has(parent)) append(threadsOf, parent, channel);
      else orphanThreads.push(channel);
    } else {
      const inCategory = channel.type !== CATEGORY && parent && categories.has(parent);
      append(childrenOf, inCategory ? parent : null, channel);
    }
  }

  const ordered: T[] = [];
  const place = (channel: T): void => {
    ordered.push(channel);
    const threads = threadsOf.get(channel.id) ?? [];
    ordered.push(...threads.sort((a, b) => compareSnowflakes(a.id, b.id)));
  };
  const top = (childrenOf.get(null) ?? []).sort((a, b) => {
    const categoryA = a.type === CATEGORY ? 1 : 0;
    const categoryB = b.type === CATEGORY ? 1 : 0;
    return categoryA - categoryB || compareSiblings(a, b);
  });
  for (const channel of top) {
    place(channel);
    if (channel.type !== CATEGORY) continue;
    for (const child of (childrenOf.get(channel.id) ?? []).sort(compareSiblings)) place(child);
  }
  ordered.push(...orphanThreads.sort((a, b) => compareSnowflakes(a.id, b.id)));
  return ordered;
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
