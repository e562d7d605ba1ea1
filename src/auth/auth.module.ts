import { Module } from '@nestjs/common';
import { BearerStrategy } from 'src/auth/bearer.strategy';
import { GrantService } from 'src/auth/grant.service';
import { GuildScopeGuard } from 'src/auth/guild-scope.guard';
import { LoginService } from 'src/auth/login.service';
import { OAuth2CodeGuard } from 'src/auth/oauth2-code-guard';
import { OAuth2Controller } from 'src/auth/oauth2.controller';
import { SessionAuthGuard } from 'src/auth/session-auth.guard';
import { TokenCipher } from 'src/auth/token-cipher';
import { SessionsModule } from 'src/sessions/sessions.module';
import { UsersModule } from 'src/users/users.module';
import { Feature } from 'src/common/feature/feature.decorator';

/** OAuth2 login, the bearer strategy and global guards, and the users' platform grants. */
@Feature({ tags: { auth: 'Logging in with the chat platform (OAuth2)' } })
@Module({
  imports: [UsersModule, SessionsModule],
  controllers: [OAuth2Controller],
  providers: [
    BearerStrategy,
    SessionAuthGuard,
    GuildScopeGuard,
    TokenCipher,
    GrantService,
    OAuth2CodeGuard,
    LoginService,
  ],
  exports: [SessionAuthGuard, GuildScopeGuard, GrantService, SessionsModule],
})
export class AuthModule {}
