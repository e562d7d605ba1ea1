import { EventEmitter2 } from '@nestjs/event-emitter';
import { UserEntity } from 'src/users/user.entity';
import { UserStateChangedEvent } from 'src/users/users.events';
import { UsersService } from 'src/users/users.service';
import { openServiceDatabase, type ServiceDatabase } from 'test/support/service-database';

const KNOWN = '1100000000000000011';
const UNSEEN = '1100000000000000012';
const PROFILE = {
  id: UNSEEN,
  username: 'bob',
  global_name: 'Bob',
  avatar: null,
  discriminator: '0',
};

/** The users table, by the service's migrations. */
let database: ServiceDatabase;

beforeAll(async () => {
  database = await openServiceDatabase();
}, 60_000);

afterAll(() => database?.close());

async function setUp(): Promise<{ service: UsersService; changes: UserStateChangedEvent[] }> {
  await database.clear();
  await database.dataSource.getRepository(UserEntity).insert({ id: KNOWN, username: 'alice' });
  const events = new EventEmitter2();
  const changes: UserStateChangedEvent[] = [];
  events.on(UserStateChangedEvent.event, (change: UserStateChangedEvent) => changes.push(change));
  const service = new UsersService(database.dataSource.getRepository(UserEntity), events);
  return { service, changes };
}

describe('UsersService.setState', () => {
  it('bans and unbans a user, answering the state before and announcing each change', async () => {
    const { service, changes } = await setUp();
    expect(await service.setState(KNOWN, 'banned')).toBe('normal');
    expect(await service.setState(KNOWN, 'banned')).toBe('banned');
    expect((await service.find(KNOWN))?.state).toBe('banned');
    expect(await service.setState(KNOWN, 'normal')).toBe('banned');
    expect(await service.setState(KNOWN, 'normal')).toBe('normal');
    expect((await service.find(KNOWN))?.state).toBe('normal');
    expect(changes).toEqual([
      new UserStateChangedEvent(KNOWN, 'banned'),
      new UserStateChangedEvent(KNOWN, 'normal'),
    ]);
  });

  it('bans an id that has not logged in, and the ban outlives their first profile', async () => {
    const { service } = await setUp();
    expect(await service.setState(UNSEEN, 'banned')).toBeNull();
    expect(await service.find(UNSEEN)).toMatchObject({
      state: 'banned',
      username: `user-${UNSEEN}`,
    });
    // What a login stores (were it not refused) keeps the ban.
    await service.upsertProfile(PROFILE);
    expect(await service.find(UNSEEN)).toMatchObject({ state: 'banned', username: 'bob' });
  });

  it('unbans an id that has not logged in without storing it', async () => {
    const { service, changes } = await setUp();
    expect(await service.setState(UNSEEN, 'normal')).toBeNull();
    expect(await service.find(UNSEEN)).toBeNull();
    expect(changes).toEqual([]);
  });
});
