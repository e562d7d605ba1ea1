// For tests: the Bot Management Service's internal routes as far as the reporters can tell. It
// accepts every report, answers as the service documents (a snapshot complete, a guild-state batch
// applied with no gap and no resync, a shard report stored) and records each request; or it
// refuses them all as `refuse` says.

import type {
  FetchLike,
  GuildEventBatch,
  GuildSnapshotPart,
  GuildStateBatch,
} from 'clients/bot-reporter/src';

export interface Sent {
  method: string;
  path: string;
  body: unknown;
}

export function fakeService(refuse?: { status: number; code: string; message: string }): {
  fetch: FetchLike;
  sent: Sent[];
} {
  const sent: Sent[] = [];
  const fetch: FetchLike = (url, init) => {
    const path = new URL(url).pathname;
    const body: unknown = init.body === undefined ? undefined : JSON.parse(init.body as string);
    sent.push({ method: init.method ?? 'GET', path, body });
    if (refuse !== undefined) {
      return Promise.resolve(Response.json(refuse, { status: refuse.status }));
    }
    const shardId = Number(/\/internal\/shards\/(\d+)/.exec(path)?.[1]);
    if (path.endsWith('/guilds')) {
      const part = body as GuildSnapshotPart;
      return Promise.resolve(
        Response.json({
          shard_id: shardId,
          snapshot_at: part.snapshot_at,
          received: part.total,
          total: part.total,
          complete: true,
        }),
      );
    }
    if (path.endsWith('/guild-events')) {
      const batch = body as GuildEventBatch;
      return Promise.resolve(Response.json({ applied: batch.events.length, ignored: 0 }));
    }
    if (path.endsWith('/guild-state')) {
      const batch = body as GuildStateBatch;
      const next = (batch.reports.at(-1)?.seq ?? 0) + 1;
      return Promise.resolve(
        Response.json({
          applied: batch.reports.length,
          duplicates: 0,
          next_seq: next,
          gap: null,
          resync: [],
        }),
      );
    }
    return Promise.resolve(Response.json({ shard_id: shardId, ...(body as object) }));
  };
  return { fetch, sent };
}
