import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KnownTokens } from 'src/sessions/known-tokens';
import { SessionCache } from 'src/sessions/session-cache';
import { SessionInvalidation } from 'src/sessions/session-invalidation';
import { SessionEntity } from 'src/sessions/session.entity';
import { SessionsController } from 'src/sessions/sessions.controller';
import { SessionsService } from 'src/sessions/sessions.service';
import { UsersModule } from 'src/users/users.module';
import { Feature } from 'src/common/feature/feature.decorator';

/** Sessions and API tokens: storage, the resolved-session cache and the /sessions endpoints. */
@Feature({
  tags: { sessions: 'Login sessions and API tokens' },
  commands: () =>
    import('./sessions.cli').then((m) => [
      m.CreateTokenCommand,
      m.BanSessionCommand,
      m.ListSessionsCommand,
      m.PurgeExpiredSessionsCommand,
    ]),
})
@Module({
  imports: [TypeOrmModule.forFeature([SessionEntity]), UsersModule],
  controllers: [SessionsController],
  providers: [SessionsService, SessionCache, SessionInvalidation, KnownTokens],
  exports: [SessionsService, SessionInvalidation],
})
export class SessionsModule {}
