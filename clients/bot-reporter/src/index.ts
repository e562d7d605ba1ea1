export {
  isSnowflake,
  MAX_EVENT_BATCH,
  MAX_SNAPSHOT_PART,
  shardOfGuild,
  type ApiErrorBody,
  type BotGuildsShard,
  type BotGuildsStatus,
  type GuildEvent,
  type GuildEventBatch,
  type GuildEventsResult,
  type GuildEventType,
  type GuildSnapshotPart,
  type GuildSnapshotProgress,
} from './contract.js';
export {
  createMembershipReporter,
  type MembershipReporter,
  type MembershipReporterOptions,
} from './reporter.js';
export {
  createShardStatsReporter,
  type ShardStats,
  type ShardStatsReporter,
  type ShardStatsReporterOptions,
  type ShardStatus,
} from './shard-stats-reporter.js';
export {
  ReporterError,
  type FetchLike,
  type ReporterErrorKind,
  type RequestOptions,
} from './transport.js';
export {
  CHANNEL_FLAG_OBFUSCATED,
  guildStateHash,
  MAX_STATE_BATCH_BYTES,
  MAX_STATE_CHANNELS,
  MAX_STATE_REPORTS,
  MAX_STATE_ROLES,
  MAX_STATE_THREADS,
  type GuildState,
  type GuildStateBatch,
  type GuildStateChannel,
  type GuildStateFields,
  type GuildStateMember,
  type GuildStateOverwrite,
  type GuildStateReceipt,
  type GuildStateReport,
  type GuildStateReportType,
  type GuildStateRole,
  type GuildStateStream,
  type GuildStateThread,
} from './guild-state.js';
export {
  GuildStateCopy,
  MAX_DELETED_IDS,
  type GuildStateChange,
  type GuildStatePartChange,
} from './guild-state-copy.js';
export {
  createGuildStateReporter,
  type GuildStateReporter,
  type GuildStateReporterOptions,
} from './guild-state-reporter.js';
