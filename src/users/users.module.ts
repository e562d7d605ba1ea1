import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UserEntity } from 'src/users/user.entity';
import { UsersService } from 'src/users/users.service';
import { Feature } from 'src/common/feature/feature.decorator';

/**
 * Users and their bans. Exports the user repository too, for the modules that keep their own
 * columns on a user (the platform grant).
 */
@Feature({
  commands: () => import('./users.cli').then((m) => [m.BanUserCommand, m.UnbanUserCommand]),
})
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity])],
  providers: [UsersService],
  exports: [UsersService, TypeOrmModule],
})
export class UsersModule {}
