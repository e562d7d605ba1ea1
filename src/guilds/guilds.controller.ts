import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Auth } from 'src/common/decorators/auth.decorator';
import { CurrentSession } from 'src/common/decorators/current-session.decorator';
import { ApiSnowflakeParam } from 'src/common/decorators/api-snowflake-param.decorator';
import { ErrorCode } from 'src/common/errors/error-code';
import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { RateLimit } from 'src/common/rate-limit/rate-limit.decorator';
import type { GuildUserInfoDto } from 'src/guilds/dto/guild-user-info.dto';
import { UserGuildsQueryDto, type UserGuildsDto } from 'src/guilds/dto/user-guilds.dto';
import { GuildInfoService } from 'src/guilds/guild-info.service';
import { UserGuildsService } from 'src/guilds/user-guilds.service';
import { GuildId } from 'src/common/decorators/guild-id.decorator';

@ApiTags('guilds')
@Auth()
@Controller('users/@me/guilds')
export class GuildsController {
  constructor(
    private readonly userGuilds: UserGuildsService,
    private readonly guildInfo: GuildInfoService,
  ) {}

  @Get()
  @RateLimit('guilds-refresh', (request) => isRefresh(request.query))
  @ApiOperation({
    summary: 'Your guilds, and which of them the bot is in (cached; refresh=true reads anew)',
  })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted)
  async list(
    @CurrentSession() session: AuthenticatedSession,
    @Query() query: UserGuildsQueryDto,
  ): Promise<UserGuildsDto> {
    const list = await this.userGuilds.list(session.userId, query.refresh === 'true');
    return withinScope(list, session.scope?.guilds);
  }

  @Get(':guild_id')
  @RateLimit('guild-info')
  @ApiSnowflakeParam('guild_id', DEMO_DEFAULTS.mainServer)
  @ApiOperation({
    summary: "A guild with its roles and channels, and your and the bot's permissions in each",
  })
  @ApiErrorResponses(ErrorCode.BadRequest, ErrorCode.Restricted, ErrorCode.NotFound)
  get(
    @CurrentSession() session: AuthenticatedSession,
    @GuildId() guildId: string,
  ): Promise<GuildUserInfoDto> {
    return this.guildInfo.forUser(guildId, session.userId);
  }
}

function isRefresh(query: unknown): boolean {
  return (query as { refresh?: unknown } | undefined)?.refresh === 'true';
}

/** A token limited to some guilds sees only those. */
function withinScope(
  list: UserGuildsDto,
  guilds: readonly string[] | null | undefined,
): UserGuildsDto {
  if (!guilds) return list;
  return {
    guilds: list.guilds.filter((guild) => guilds.includes(guild.id)),
    bot_in_guilds: list.bot_in_guilds.filter((id) => guilds.includes(id)),
  };
}
