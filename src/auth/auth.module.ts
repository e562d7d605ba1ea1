import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BearerStrategy } from 'src/auth/bearer.strategy';
import { GrantService } from 'src/auth/grant.service';
import { LoginService } from 'src/auth/login.service';
import { OAuth2CodeGuard } from 'src/auth/oauth2-code-guard';
import { OAuth2Controller } from 'src/auth/oauth2.controller';
import { SessionAuthGuard } from 'src/auth/session-auth.guard';
import { TokenCipher } from 'src/auth/token-cipher';
import { UserEntity } from 'src/auth/user.entity';
import { UsersService } from 'src/auth/users.service';
import { SessionsModule } from 'src/sessions/sessions.module';

/** OAuth2 login, the bearer strategy and global guard, users, bans and platform grants. */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity]), SessionsModule],
  controllers: [OAuth2Controller],
  providers: [
    BearerStrategy,
    SessionAuthGuard,
    TokenCipher,
    UsersService,
    GrantService,
    OAuth2CodeGuard,
    LoginService,
  ],
  exports: [SessionAuthGuard, UsersService, GrantService, SessionsModule],
})
export class AuthModule {}
