import {
  Controller,
  createParamDecorator,
  type ExecutionContext,
  Param,
  Req,
  Sse,
  type MessageEvent,
} from '@nestjs/common';
import {
  ApiExtraModels,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { ParseIntegerPipe } from 'src/common/validation/integer-text';
import { ParseSnowflakePipe } from 'src/common/validation/snowflake';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { BotEventsService } from 'src/events/bot-events.service';
import {
  BotTotalsEventDto,
  GuildStreamPositionDto,
  SettingsChangeEventDto,
  ShardStatusEventDto,
} from 'src/events/dto/events.dto';
import { GuildEventsService } from 'src/events/guild-events.service';
import { BotStatsDto } from 'src/stats/dto/bot-stats.dto';

/** The largest event id a stream sends (revision numbers and bot event numbers). */
const MAX_EVENT_ID = 2 ** 31 - 1;

const EVENT_ID = new ParseIntegerPipe('Last-Event-ID', 0, MAX_EVENT_ID);

/**
 * `Last-Event-ID`, sent by a reconnecting `EventSource`: null when absent, else an id this service
 * could have sent (400 naming the header otherwise).
 */
const LastEventId = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const value = context.switchToHttp().getRequest<FastifyRequest>().headers['last-event-id'];
  return value === undefined ? null : EVENT_ID.transform(value);
});

const LastEventIdHeader = ApiHeader({
  name: 'Last-Event-ID',
  required: false,
  description:
    'The id of the last event received: the stream resumes after it (an `EventSource` sends it when it reconnects)',
  schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$', example: '42' },
});

/**
 * How an event stream is described. OpenAPI 3.0 has no model of a stream, so its schema lists the
 * events it carries (name, id and the `data` schema of each) as the items of an array: the body
 * itself is `text/event-stream`, each event an `event:`, `id:` and `data:` (JSON) block.
 */
function eventStreamResponse(
  events: Record<string, { description: string; data: string }>,
): MethodDecorator {
  return ApiOkResponse({
    description: 'The stream of events (Server-Sent Events)',
    content: {
      'text/event-stream': {
        schema: {
          type: 'array',
          description:
            "The stream's events, each sent as `event: <name>`, `id: <id>` and `data: <JSON>` lines (text/event-stream, not a JSON array)",
          items: {
            oneOf: Object.entries(events).map(([name, event]) => ({
              type: 'object',
              description: event.description,
              required: ['event', 'id', 'data'],
              properties: {
                event: { type: 'string', enum: [name] },
                id: { type: 'string', pattern: '^(0|[1-9][0-9]{0,9})$' },
                data: { $ref: getSchemaPath(event.data) },
              },
            })),
          },
        },
      },
    },
  });
}

/**
 * Server-Sent Events: a guild's settings changes and the bot's health, pushed as they happen.
 * Framing, headers and back-pressure are Nest's `@Sse()`; heartbeats, limits and resuming are
 * `EventStreams` and the two services.
 */
@ApiTags('events')
@ApiExtraModels(
  GuildStreamPositionDto,
  SettingsChangeEventDto,
  ShardStatusEventDto,
  BotTotalsEventDto,
  BotStatsDto,
)
@Controller()
export class EventsController {
  constructor(
    private readonly guildEvents: GuildEventsService,
    private readonly botEvents: BotEventsService,
  ) {}

  @Auth()
  @Sse('guilds/:guild_id/events')
  @ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
  @LastEventIdHeader
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: "A guild's settings changes as they are committed (Server-Sent Events)",
    description:
      "Each change arrives as one `settings` event per entry, for the settings whose View permission the caller holds at that moment (checked per event). The `id` of each event is the guild's revision number: a client that reconnects with `Last-Event-ID` receives what it missed (up to 1,000 revisions; further behind, a `reset` event says to read the settings again). Comments (`: heartbeat`) keep idle streams open. The stream ends when the session is revoked or its user banned, and when the instance shuts down (the client reconnects).",
  })
  @eventStreamResponse({
    ready: {
      description: 'The first event of a new stream: where the guild stands',
      data: 'GuildStreamPositionDto',
    },
    settings: {
      description: 'A committed change to one entry (id: its revision number)',
      data: 'SettingsChangeEventDto',
    },
    reset: {
      description: 'The client missed too much to replay: read the settings again',
      data: 'GuildStreamPositionDto',
    },
  })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  guildEventsStream(
    @CurrentSession() session: AuthenticatedSession,
    @Param('guild_id', new ParseSnowflakePipe('guild_id')) guildId: string,
    @LastEventId() lastEventId: number | null,
    @Req() request: FastifyRequest,
  ): Promise<Observable<MessageEvent>> {
    // Kept to check the session again while the stream is open; the guard has accepted it.
    const token = (request.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    return this.guildEvents.follow(guildId, session, token, lastEventId);
  }

  @Public()
  @Sse('bot-stats/events')
  @LastEventIdHeader
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: "The bot's health as it changes: shard statuses and totals (Server-Sent Events)",
    description:
      'Public, like `GET /bot-stats`. A new stream opens with a `stats` event (the body of `GET /bot-stats`); then `shard` events as shard statuses change (a shard silent for 2 minutes becomes `Unknown`) and `totals` events as the totals change, within about 2 seconds. A client that reconnects with `Last-Event-ID` receives what it missed from the last 1,000 events, or a fresh `stats` event if it is further behind. Comments (`: heartbeat`) keep idle streams open.',
  })
  @eventStreamResponse({
    stats: { description: 'The current state: the body of GET /bot-stats', data: 'BotStatsDto' },
    shard: { description: "A shard's status changed", data: 'ShardStatusEventDto' },
    totals: { description: 'The totals changed', data: 'BotTotalsEventDto' },
  })
  @ApiErrorResponses(ErrorCode.BadRequest)
  botEventsStream(
    @Req() request: FastifyRequest,
    @LastEventId() lastEventId: number | null,
  ): Promise<Observable<MessageEvent>> {
    return this.botEvents.follow(request.ip, lastEventId);
  }
}
