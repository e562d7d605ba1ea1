import {
  applyDecorators,
  Controller,
  createParamDecorator,
  type ExecutionContext,
  Req,
  Sse,
  SseSignal,
  type MessageEvent,
} from '@nestjs/common';
import {
  ApiExtension,
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
import { readAuthorization, tokenOf } from 'src/auth/authorization-header';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { ParseIntegerPipe } from 'src/common/validation/integer-text';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { BotEventsService } from 'src/events/bot-events.service';
import {
  BotTotalsEventDto,
  GuildStreamPositionDto,
  SettingsChangeEventDto,
  ShardStatusEventDto,
} from 'src/events/dto/events.dto';
import { MAX_BUFFERED_BYTES } from 'src/events/event-streams';
import { GuildEventsService } from 'src/events/guild-events.service';
import { BotStatsDto } from 'src/bot-reports/shard-stats/dto/bot-stats.dto';
import { GuildId } from 'src/common/decorators/guild-id.decorator';

/** The largest event id a stream could send (revision numbers, bot event numbers). */
const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER;

/**
 * Nest's own guard on events waiting for a client that does not read. The stream's budget is
 * enforced before it, on every event (`MAX_BUFFERED_BYTES`, src/events/event-streams.ts).
 */
const SSE_OPTIONS = { maxPendingDataLength: MAX_BUFFERED_BYTES };

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
  // No example: Swagger UI would send it, and a stream opened from the page would skip events.
  schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
});

/**
 * Said first in each stream's description: a stream does not end, so Swagger UI's "Execute" waits
 * for it and shows nothing.
 */
const FOLLOW_A_STREAM =
  "Follow it with an `EventSource` or `curl -N` (with the `Authorization` header where it is needed): a stream stays open, so Swagger UI's Execute waits on it and shows no event. ";

/**
 * How an event stream is described. OpenAPI 3.0 has no model of a stream: the body is a string
 * (`text/event-stream`, so that generated clients read it as a stream, never as JSON), and the
 * operation's `x-sse-events` lists the events it carries, each with the schema of its `data`.
 */
function eventStreamResponse(
  events: Record<string, { description: string; data: string }>,
): MethodDecorator {
  const list = Object.entries(events)
    .map(([name, event]) => `\`${name}\` (${event.description}; data: ${event.data})`)
    .join(', ');
  return applyDecorators(
    ApiOkResponse({
      description: `The stream of events (Server-Sent Events): ${list}. Each is sent as \`event:\`, \`id:\` and \`data:\` (JSON) lines; \`: heartbeat\` comments keep the stream open.`,
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    }),
    ApiExtension(
      'x-sse-events',
      Object.entries(events).map(([name, event]) => ({
        event: name,
        description: event.description,
        id: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
        data: { $ref: getSchemaPath(event.data) },
      })),
    ),
  );
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
  @Sse('guilds/:guild_id/events', SSE_OPTIONS)
  @ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
  @LastEventIdHeader
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: "A guild's settings changes as they are committed (Server-Sent Events)",
    description:
      FOLLOW_A_STREAM +
      "Each change arrives as one `settings` event per entry, for the settings whose View permission the caller holds at that moment (checked per event). The `id` of each event is the guild's revision number: a client that reconnects with `Last-Event-ID` receives what it missed (if it was away for less than 10 minutes and missed at most 1,000 revisions; else a `reset` event says to read the settings again). Comments (`: heartbeat`) keep idle streams open. The stream ends when the session is revoked or its user banned, when its client stops reading, after an hour (`EVENTS_MAX_STREAM_SECONDS`), and when the instance shuts down (the client reconnects).",
  })
  @eventStreamResponse({
    ready: {
      description: 'The first event of a new stream: where the guild stands',
      data: 'GuildStreamPositionDto',
    },
    settings: {
      description:
        'A committed change to one entry of a setting the caller may view (id: its revision number; a revision the caller may not see moves the id on with an `id:` line alone, dispatching nothing)',
      data: 'SettingsChangeEventDto',
    },
    reset: {
      description:
        'The client missed too much to replay (over 1,000 revisions, one older than 10 minutes, or an id past the newest), or one change held more than 50 revisions (an import, a restore): read the settings again',
      data: 'GuildStreamPositionDto',
    },
  })
  // 403 Restricted comes with @Auth().
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.NotFound)
  guildEventsStream(
    @CurrentSession() session: AuthenticatedSession,
    @GuildId() guildId: string,
    @LastEventId() lastEventId: number | null,
    @Req() request: FastifyRequest,
    @SseSignal() signal: AbortSignal,
  ): Promise<Observable<MessageEvent>> {
    // Kept to check the session again while the stream is open; the guard has accepted it.
    const token = tokenOf(readAuthorization(request.headers.authorization)) ?? '';
    return this.guildEvents.follow(
      guildId,
      session,
      token,
      lastEventId,
      signal,
      request.raw.socket,
    );
  }

  @Public()
  @Sse('bot-stats/events', SSE_OPTIONS)
  @LastEventIdHeader
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: "The bot's health as it changes: shard statuses and totals (Server-Sent Events)",
    description:
      FOLLOW_A_STREAM +
      'Public, like `GET /bot-stats`. A new stream opens with a `stats` event (the body of `GET /bot-stats`); then `shard` events as shard statuses change (a shard silent for 2 minutes becomes `Unknown`) and `totals` events as the totals change: at once after a report, within 2 seconds for a shard falling silent. A client that reconnects with `Last-Event-ID` receives what it missed from the last 1,000 events, or a fresh `stats` event if it is further behind. Comments (`: heartbeat`) keep idle streams open.',
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
    @SseSignal() signal: AbortSignal,
  ): Promise<Observable<MessageEvent>> {
    return this.botEvents.follow(request.ip, lastEventId, signal, request.raw.socket);
  }
}
