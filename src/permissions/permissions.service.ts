import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { GuildAccessService } from 'src/guilds/guild-access.service';
import { type GuildContext } from 'src/guilds/guild-context';
import { memberPermissions } from 'src/permissions/edit-checks';
import { GuildMemberEntity } from 'src/permissions/guild-member.entity';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { hasPerm } from 'src/permissions/permission-string';
import type {
  ChangeRows,
  PermissionCaller,
  PermissionGuild,
  PermissionMember,
  PermissionReads,
  PermissionTest,
  ResolvedCaller,
  SettingsPermissions,
} from 'src/settings/schema/settings-permissions';

const ROLE_ENTRIES_KEY = 'role-entries';

const memberKey = (userId: string): string => `member:${userId}`;

/** Reads straight from the database. */
const UNCACHED: PermissionReads = { get: (_key, loader) => loader() };

/**
 * The bot's permission strings in a guild: the `guildroles` entries of the guild's Discord roles
 * and each member's `guildmembers` overrides. `may` answers any module's question ("may this caller
 * do `lockdown.create` here?"); the lower-level methods serve the settings engine, which asks for
 * them as `SettingsPermissions` (the declaration kit's contract), and its edit checks.
 */
@Injectable()
export class PermissionsService implements SettingsPermissions {
  constructor(
    private readonly guilds: GuildAccessService,
    @InjectRepository(GuildRoleEntity) private readonly roles: Repository<GuildRoleEntity>,
    @InjectRepository(GuildMemberEntity) private readonly members: Repository<GuildMemberEntity>,
  ) {}

  /**
   * What the caller may do in the guild: the one way any module asks. The answer tests a
   * permission string (`may('lockdown.create')`) and refuses one the caller lacks
   * (`may.require('lockdown.create')`: 403 `Restricted`, naming a token's scope where that is what
   * limits it). A non-member holds nothing; a scoped API token holds its user's permissions within
   * its scope. Throws the guild lookup's errors (404 when the bot is not in the guild). `reads`: a
   * cache of the guild's permission data (the settings engine passes its own), else the database.
   */
  async may(
    guildId: string,
    caller: PermissionCaller,
    reads: PermissionReads = UNCACHED,
  ): Promise<PermissionTest> {
    return this.testFor(await this.resolve(guildId, caller, reads));
  }

  /** The caller's permission data in the guild, read through `reads` (see `may`). */
  async resolve(
    guildId: string,
    { userId, scope }: PermissionCaller,
    reads: PermissionReads,
  ): Promise<ResolvedCaller> {
    const { context, user: access } = await this.guilds.withMember(guildId, userId);
    const guild = await this.guild(context, reads);
    const own = access
      ? await this.member(guildId, userId, access.member.roles, reads)
      : { userId, roles: [], overrides: [] };
    return { context, guild, author: scope ? { ...own, scope } : own, isMember: access !== null };
  }

  /** `may`'s answer for a resolved caller. */
  testFor(caller: ResolvedCaller): PermissionTest {
    const test = (permission: string): boolean =>
      this.holds(caller.guild, caller.author, permission);
    return Object.assign(test, {
      require: (permission: string): void => this.require(caller, permission),
    });
  }

  /**
   * Refuses (403 `Restricted`) a caller who does not hold `permission`. A token limited to a
   * scope that lacks it is told so, whatever its user holds outside the scope: the answer never
   * says which permissions those are.
   */
  require(caller: ResolvedCaller, permission: string): void {
    if (this.holds(caller.guild, caller.author, permission)) return;
    const { scope } = caller.author;
    if (scope && !hasPerm(scope, permission)) {
      throw new AppException(
        ErrorCode.Restricted,
        `This API token is limited to the permissions ${scope.join(', ')}; it cannot use ${permission}`,
      );
    }
    throw new AppException(
      ErrorCode.Restricted,
      `You need the permission ${permission} in this guild`,
    );
  }

  private readonly builtForChange = new WeakMap<
    ChangeRows,
    { context: GuildContext; changes: number; guild: PermissionGuild }
  >();
  private readonly built = new WeakMap<
    GuildContext,
    { entries: unknown; guild: PermissionGuild }
  >();
  private readonly resolvedByGuild = new WeakMap<PermissionGuild, Map<string, string[]>>();
  private readonly answersByResolved = new WeakMap<readonly string[], Map<string, boolean>>();

  /**
   * The guild's role entries with its Discord roles, read through the guild's cache (a settings
   * change reads them through its own rows instead: `guildIn`).
   */
  async guild(context: GuildContext, via: PermissionReads): Promise<PermissionGuild> {
    const entries = await via.get(ROLE_ENTRIES_KEY, () =>
      loadEntries(this.roles, context.guild.id),
    );
    return this.builtGuild(context, entries);
  }

  /**
   * The guild's permission data as a settings change sees it (read in its transaction, or in a dry
   * run's reads, with the change's own writes applied): the answer `guild` gives once the change
   * is stored. Built again only when the change has written role entries.
   */
  async guildIn(context: GuildContext, rows: ChangeRows): Promise<PermissionGuild> {
    const changes = rows.changesIn(GuildRoleEntity);
    const memo = this.builtForChange.get(rows);
    if (memo?.context === context && memo.changes === changes) return memo.guild;
    const guild = buildGuild(context, entriesOf(await rows.all(GuildRoleEntity)));
    this.builtForChange.set(rows, { context, changes, guild });
    return guild;
  }

  /** A member's permission data as a settings change sees it (see `guildIn`). */
  async memberIn(
    userId: string,
    discordRoles: readonly string[],
    rows: ChangeRows,
  ): Promise<PermissionMember> {
    const stored = (await rows.row(GuildMemberEntity, {
      user_id: userId,
    })) as GuildMemberEntity | null;
    return { userId, roles: discordRoles, overrides: stored?.perm_overrides ?? [] };
  }

  /** The same context and the same cached entries give the same answer: built once. */
  private builtGuild(context: GuildContext, entries: readonly StoredEntry[]): PermissionGuild {
    const built = this.built.get(context);
    if (built?.entries === entries) return built.guild;
    const guild = buildGuild(context, entries);
    this.built.set(context, { entries, guild });
    return guild;
  }

  /** A member's resolved permission strings, computed once per guild state and member state. */
  resolved(guild: PermissionGuild, member: PermissionMember): string[] {
    let byMember = this.resolvedByGuild.get(guild);
    if (!byMember) {
      byMember = new Map();
      this.resolvedByGuild.set(guild, byMember);
    }
    const key = `${member.userId}|${member.roles.join(',')}|${member.overrides.join(',')}|${member.scope?.join(',') ?? ''}`;
    let perms = byMember.get(key);
    if (!perms) {
      perms = memberPermissions(guild, member);
      byMember.set(key, perms);
    }
    return perms;
  }

  /**
   * Whether the member holds `permission`: answered once per resolved permission list (a list
   * lives as long as its guild state), as every request asks the same few questions.
   */
  holds(guild: PermissionGuild, member: PermissionMember, permission: string): boolean {
    const held = this.resolved(guild, member);
    let answers = this.answersByResolved.get(held);
    if (!answers) {
      answers = new Map();
      this.answersByResolved.set(held, answers);
    }
    let answer = answers.get(permission);
    if (answer === undefined) {
      answer = hasPerm(held, permission);
      answers.set(permission, answer);
    }
    return answer;
  }

  /** The member's permission data, read through the guild's cache (a change's own: `memberIn`). */
  async member(
    guildId: string,
    userId: string,
    discordRoles: readonly string[],
    via: PermissionReads,
  ): Promise<PermissionMember> {
    const overrides = await via.get(memberKey(userId), async () => {
      const stored = await this.members.findOne({ where: { guild_id: guildId, user_id: userId } });
      return stored?.perm_overrides ?? [];
    });
    return { userId, roles: discordRoles, overrides };
  }
}

interface StoredEntry {
  role_id: string;
  index: number;
  perms: string[];
}

async function loadEntries(
  roles: Repository<GuildRoleEntity>,
  guildId: string,
): Promise<StoredEntry[]> {
  return entriesOf(await roles.find({ where: { guild_id: guildId } }));
}

function entriesOf(rows: readonly GuildRoleEntity[]): StoredEntry[] {
  return rows.map((e) => ({ role_id: e.role_id, index: e.index, perms: e.perms }));
}

function buildGuild(context: GuildContext, entries: readonly StoredEntry[]): PermissionGuild {
  return {
    ownerId: context.guild.owner_id,
    roles: context.guild.roles.map((role) => ({ id: role.id, position: role.position })),
    entries: new Map(entries.map((e) => [e.role_id, { index: e.index, perms: e.perms }])),
  };
}
