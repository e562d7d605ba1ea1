import type { Type } from '@nestjs/common';
import { AuditLogModule } from 'src/audit-log/audit-log.module';
import { AuthModule } from 'src/auth/auth.module';
import { BotReportsModule } from 'src/bot-reports/bot-reports.module';
import { CasesModule } from 'src/cases/cases.module';
import { ClientConfigModule } from 'src/client-config/client-config.module';
import { CommandsModule } from 'src/commands/commands.module';
import { EventsModule } from 'src/events/events.module';
import { GuildsModule } from 'src/guilds/guilds.module';
import { HealthModule } from 'src/health/health.module';
import { MetricsModule } from 'src/metrics/metrics.module';
import { ModerationModule } from 'src/moderation/moderation.module';
import { PermissionsModule } from 'src/permissions/permissions.module';
import { SessionsModule } from 'src/sessions/sessions.module';
import { SettingsModule } from 'src/settings/settings.module';
import { UsersModule } from 'src/users/users.module';

/**
 * The service's feature modules, registered once: the application serves them (AppModule), the
 * admin CLI runs on them (CliServicesModule: the settings they declare, the services its commands
 * use) and registers the commands they declare, and the OpenAPI document takes their tags
 * (`@Feature` in src/common/feature/feature.decorator.ts). A new module is added here and nowhere
 * else (CONTRIBUTING.md, "A module").
 */
export const FEATURE_MODULES: readonly Type[] = [
  AuthModule,
  UsersModule,
  SessionsModule,
  BotReportsModule,
  GuildsModule,
  PermissionsModule,
  SettingsModule,
  ModerationModule,
  CasesModule,
  AuditLogModule,
  CommandsModule,
  EventsModule,
  ClientConfigModule,
  HealthModule,
  MetricsModule,
];
