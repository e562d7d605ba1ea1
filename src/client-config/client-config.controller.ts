import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from 'src/common/decorators/api-error-responses.decorator';
import { Public } from 'src/common/decorators/public.decorator';
import { AppConfig } from 'src/config/app-config';
import { ClientConfigDto } from 'src/client-config/dto/client-config.dto';

@ApiTags('config')
@Controller('config')
/** Named for its route, `/config` (the OpenAPI operation id follows the class name). */
export class ConfigController {
  private readonly clientConfig: ClientConfigDto;

  constructor(config: AppConfig) {
    // Static for the life of the process: built once, not per request.
    this.clientConfig = {
      client_id: config.platform.clientId,
      main_server: config.community.mainServer,
      support_server_invite: config.community.supportServerInvite,
    };
  }

  @Public()
  @Get()
  @ApiOperation({ summary: 'Public client configuration' })
  @ApiErrorResponses()
  getConfig(): ClientConfigDto {
    return this.clientConfig;
  }
}
