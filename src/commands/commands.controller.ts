import { Controller, Get, Headers, HttpStatus, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CommandsService } from 'src/commands/commands.service';
import { BotStateDto } from 'src/commands/dto/bot-state.dto';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { ifNoneMatchMatches } from 'src/common/http/if-none-match';

/** The catalog changes only with a deployment; clients revalidate with `If-None-Match`. */
const CACHE_CONTROL = 'public, max-age=300, must-revalidate';

@ApiTags('commands')
@Controller('bot-state')
export class CommandsController {
  constructor(private readonly commands: CommandsService) {}

  @Public()
  @Get()
  @ApiOperation({
    summary: "The bot's built-in commands",
    description: 'Carries a strong `ETag`; `If-None-Match` with it answers 304 without a body.',
  })
  @ApiHeader({
    name: 'If-None-Match',
    required: false,
    description: 'An `ETag` from an earlier answer: 304 without a body while it still matches.',
  })
  @ApiOkResponse({
    type: BotStateDto,
    description: 'The catalog',
    headers: {
      ETag: { description: 'Strong validator of the catalog', schema: { type: 'string' } },
      'Cache-Control': { description: CACHE_CONTROL, schema: { type: 'string' } },
    },
  })
  @ApiResponse({
    status: HttpStatus.NOT_MODIFIED,
    description: 'The catalog has not changed',
    headers: {
      ETag: { description: 'The same validator', schema: { type: 'string' } },
      'Cache-Control': { description: CACHE_CONTROL, schema: { type: 'string' } },
    },
  })
  @ApiErrorResponses()
  botState(
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): string | undefined {
    const { etag, botStateJson } = this.commands;
    void reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
    if (ifNoneMatchMatches(ifNoneMatch, etag)) {
      void reply.status(HttpStatus.NOT_MODIFIED);
      return undefined;
    }
    void reply.type('application/json; charset=utf-8');
    return botStateJson;
  }
}
