import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectRepository } from '@nestjs/typeorm';
import type { APIUser } from 'discord-api-types/v10';
import type { EntityManager, Repository } from 'typeorm';
import { UserEntity, type UserState } from 'src/users/user.entity';
import { UserStateChangedEvent } from 'src/users/users.events';

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly events: EventEmitter2,
  ) {}

  find(userId: string): Promise<UserEntity | null> {
    return this.users.findOne({ where: { id: userId } });
  }

  /** Creates or refreshes the user's profile; never changes the user's state (a ban stays). */
  async upsertProfile(profile: APIUser, manager?: EntityManager): Promise<void> {
    const repository = manager ? manager.getRepository(UserEntity) : this.users;
    await repository.upsert(
      {
        id: profile.id,
        username: profile.username.slice(0, 64),
        globalName: profile.global_name?.slice(0, 64) ?? null,
        avatar: profile.avatar ?? null,
      },
      { conflictPaths: ['id'], skipUpdateIfNoValuesChanged: true },
    );
  }

  /** Creates a user known only by id (an operator's API token or ban before any login). */
  async ensureExists(userId: string): Promise<void> {
    await this.users
      .createQueryBuilder()
      .insert()
      .values({ id: userId, username: `user-${userId}` })
      .orIgnore()
      .execute();
  }

  /**
   * Bans or unbans a user and answers their state before, null for an id that has not logged in
   * (nor been given an API token). Banning such an id creates the user, known only by id, so that
   * the ban refuses their first login; unbanning one changes nothing. A change takes effect at once
   * on every instance.
   */
  async setState(userId: string, state: UserState): Promise<UserState | null> {
    const before = (await this.find(userId))?.state ?? null;
    if ((before ?? 'normal') === state) return before;
    if (before === null) await this.ensureExists(userId);
    await this.users.update({ id: userId }, { state });
    await this.events.emitAsync(
      UserStateChangedEvent.event,
      new UserStateChangedEvent(userId, state),
    );
    return before;
  }
}
