import { Module } from '@nestjs/common';
import { AuditlogSinksSetting } from 'src/audit-log/auditlog-sinks.setting';

/**
 * The bot's audit log: the channels it posts moderation events to and which events each receives
 * (`auditlog_sinks`, a setting the engine serves under the group `logging`).
 */
@Module({
  providers: [AuditlogSinksSetting],
})
export class AuditLogModule {}
