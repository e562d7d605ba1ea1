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
  ReporterError,
  type FetchLike,
  type MembershipReporter,
  type MembershipReporterOptions,
  type ReporterErrorKind,
} from './reporter.js';
