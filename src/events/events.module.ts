import { Module } from '@nestjs/common';
import { SessionsModule } from 'src/sessions/sessions.module';
import { SettingsModule } from 'src/settings/settings.module';
import { BotReportsModule } from 'src/bot-reports/bot-reports.module';
import { BotEventLog } from 'src/events/bot-event-log';
import { BotEventsService } from 'src/events/bot-events.service';
import { EventBus } from 'src/events/event-bus';
import { EventStreams } from 'src/events/event-streams';
import { EventsController } from 'src/events/events.controller';
import { GuildEventsService } from 'src/events/guild-events.service';
import { Feature } from 'src/common/feature/feature.decorator';

/** Server-Sent Events: guild settings changes and bot health, across instances. */
@Feature({
  tags: {
    events:
      "Server-Sent Events: a guild's settings changes and the bot's health, pushed as they happen",
  },
})
@Module({
  imports: [SessionsModule, SettingsModule, BotReportsModule],
  controllers: [EventsController],
  providers: [EventBus, BotEventLog, EventStreams, GuildEventsService, BotEventsService],
})
export class EventsModule {}
