import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { entryBound } from 'src/common/cache/lru-bounds';
import { mapConcurrent } from 'src/common/async/map-concurrent';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { RateLimiter } from 'src/common/rate-limit/rate-limiter';
import { Clock } from 'src/common/time/clock';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import type { GuildContext, MemberAccess } from 'src/guilds/guild-context';
import type { SettingsAuthor } from 'src/settings/engine/settings-author';
import type { GuildSettingsCache } from 'src/settings/engine/settings-cache';
import { storedColumns, valuesOf } from 'src/settings/engine/settings-rows';
import type { RegisteredSetting } from 'src/settings/schema/settings-registry';
import type { SettingRow } from 'src/settings/schema/settings-definition';
import {
  SettingsPermissions,
  type ChangeRows,
  type PermissionMember,
  type PermissionTest,
  type ResolvedCaller,
} from 'src/settings/schema/settings-permissions';

/** The caller of an operation, resolved: see `SettingsPermissions.resolve`. */
export type Caller = ResolvedCaller;

/** The platform members of the users a change names, looked up once per request. */
export type NamedMembers = ReadonlyMap<string, MemberAccess | null>;

/**
 * The most users one request may name in member columns: each may cost a platform lookup
 * (docs/request-costs.md). A larger change is refused with this number, before any lookup.
 */
export const MAX_NAMED_MEMBERS = 25;

/** Member lookups one request runs at once. */
const MEMBER_LOOKUPS_AT_ONCE = 5;

/** How long a resolved caller is reused (docs/settings-engine.md, "Callers"). */
const CALLER_REUSE_MS = 1_000;

/**
 * Who the settings engine acts for, and who a change names: the caller's permission data (read
 * through the guild's settings cache, or as a change sees it), and the platform members of the
 * users a change's fields name, each lookup charged to the caller (docs/settings-engine.md).
 */
@Injectable()
export class SettingsCallers {
  /**
   * Callers resolved in the last second, by guild, settings version, user and token scope: a
   * dashboard's burst of requests resolves its caller once. Concurrent requests share one
   * resolution; a failed one is not kept.
   */
  private readonly recent: LRUCache<string, Promise<Caller>>;

  constructor(
    private readonly guilds: GuildAccessService,
    private readonly permissions: SettingsPermissions,
    private readonly limiter: RateLimiter,
    clock: Clock,
  ) {
    this.recent = new LRUCache({
      ...entryBound(10_000),
      ttl: CALLER_REUSE_MS,
      // The service's clock, as the platform cache's lifetimes are judged by.
      perf: { now: () => clock.nowMs() },
      ttlResolution: 0,
    });
  }

  /**
   * The author's permission data in the guild, read through the guild's settings cache. Whether the
   * bot is in the guild is asked every time (a leave is refused at once); the rest is reused for a
   * second while the guild's settings version stays the same, so a settings change is seen at once
   * and a platform change (a member's roles, the guild's) a second later at most.
   */
  async resolve(
    guildId: string,
    author: SettingsAuthor,
    cache: GuildSettingsCache,
  ): Promise<Caller> {
    await this.guilds.assertBotIn(guildId, author.userId);
    const scope = author.scope?.permissions ?? undefined;
    const caller = { userId: author.userId, scope };
    if (cache.version === null) return this.permissions.resolve(guildId, caller, cache);
    const key = JSON.stringify([guildId, cache.version, author.userId, scope ?? null]);
    const held = this.recent.get(key);
    if (held) return held;
    const resolving = this.permissions.resolve(guildId, caller, cache);
    this.recent.set(key, resolving);
    resolving.catch(() => {
      if (this.recent.get(key) === resolving) this.recent.delete(key);
    });
    return resolving;
  }

  /** What the caller may do (the answer `PermissionsService.may` gives any module). */
  testFor(caller: Caller): PermissionTest {
    return this.permissions.testFor(caller);
  }

  /** 403 `Restricted` unless the caller holds `permission`. */
  require(caller: Caller, permission: string): void {
    this.permissions.require(caller, permission);
  }

  /** The caller's permission data as a change sees it (its own earlier writes applied). */
  async inChange(rows: ChangeRows, caller: Caller): Promise<Caller> {
    const { context, author, isMember } = caller;
    const guild = await this.permissions.guildIn(context, rows);
    const current = isMember
      ? await this.permissions.memberIn(author.userId, author.roles, rows)
      : author;
    return {
      context,
      guild,
      author: author.scope ? { ...current, scope: author.scope } : current,
      isMember,
    };
  }

  /**
   * The platform members of the users the writes name (the targets a setting's rule may judge),
   * looked up before the guild's lock is taken: while it is held, only the database is waited
   * on. Distinct users are counted first: over MAX_NAMED_MEMBERS is refused before any lookup,
   * and each lookup the platform answers is charged to the caller's `member-lookup` budget.
   */
  async namedIn(
    caller: Caller,
    author: SettingsAuthor,
    writes: readonly { setting: RegisteredSetting; fields: unknown }[],
  ): Promise<NamedMembers> {
    const userIds = new Set<string>();
    for (const { setting, fields } of writes) {
      const rows = Array.isArray(fields) ? (fields as SettingRow[]) : [fields as SettingRow];
      for (const column of storedColumns(setting)) {
        const type = column.column_type;
        if (type.type === 'Widget' || type.inner.type !== 'String' || type.inner.kind !== 'user') {
          continue;
        }
        for (const row of rows) for (const id of valuesOf(row[column.id])) userIds.add(id);
      }
    }
    if (userIds.size > MAX_NAMED_MEMBERS) {
      const message = `This change names ${userIds.size} members; one request may name at most ${MAX_NAMED_MEMBERS} (each is looked up on the platform): split it into smaller changes`;
      throw new AppException(ErrorCode.BadRequest, message, [{ field: 'fields', message }]);
    }
    const ids = [...userIds];
    const charge = (): Promise<void> => this.charge(author.userId);
    const members = await mapConcurrent(ids, MEMBER_LOOKUPS_AT_ONCE, (id) =>
      this.guilds.memberOf(caller.context, id, charge),
    );
    return new Map(ids.map((id, i) => [id, members[i]]));
  }

  /** A member a setting's rule judges: their platform roles and their overrides as the change sees them. */
  async targetIn(
    rows: ChangeRows,
    context: GuildContext,
    userId: string,
    members: NamedMembers,
  ): Promise<PermissionMember> {
    // A user the fields do not name is looked up now (no built-in rule asks for one).
    const member = members.has(userId)
      ? (members.get(userId) ?? null)
      : await this.guilds.memberOf(context, userId);
    return this.permissions.memberIn(userId, member?.member.roles ?? [], rows);
  }

  /** Counts one platform lookup against the user's `member-lookup` budget (429 when spent). */
  private async charge(userId: string): Promise<void> {
    if (!this.limiter.enabled) return;
    const state = await this.limiter.count('member-lookup', userId);
    if (state.blocked) throw this.limiter.refusal(state);
  }
}
