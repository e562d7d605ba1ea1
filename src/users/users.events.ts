import type { UserState } from 'src/users/user.entity';

/**
 * A user's state changed (banned or unbanned). Emitted with `emitAsync` and awaited, so whatever
 * holds the user's sessions has dropped them before the change is reported done.
 */
export class UserStateChangedEvent {
  static readonly event = 'users.state-changed';

  constructor(
    readonly userId: string,
    readonly state: UserState,
  ) {}
}
