import { Param } from '@nestjs/common';
import { ParseSnowflakePipe } from 'src/common/validation/snowflake';

/** One pipe for every route: it holds nothing per request. */
const GUILD_ID = new ParseSnowflakePipe('guild_id');

/**
 * The route's `guild_id`, a snowflake (400 naming `guild_id` otherwise). Document it on the
 * controller or route with `@ApiSnowflakeParam('guild_id', …)`.
 */
export const GuildId = (): ParameterDecorator => Param('guild_id', GUILD_ID);
