/** A shard's report was stored on this instance (the bot health stream compares at once). */
export class ShardReportedEvent {
  static readonly event = 'stats.shard-reported';

  constructor(readonly shardId: number) {}
}
