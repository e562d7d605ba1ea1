import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, type Repository } from 'typeorm';
import type { GuildContext } from 'src/guilds/guild-access.service';
import {
  memberPermissions,
  type PermissionGuild,
  type PermissionMember,
} from 'src/settings/permissions/edit-checks';
import { GuildMemberEntity } from 'src/settings/permissions/guild-member.entity';
import { GuildRoleEntity } from 'src/settings/permissions/guild-role.entity';
import type { GuildSettingsCache } from 'src/settings/settings-cache';

/**
 * The bot's permission strings in a guild: the `guildroles` entries of the guild's Discord roles
 * and each member's `guildmembers` overrides, as the edit checks and `resolve` take them.
 */
@Injectable()
export class MemberPermissionsService {
  constructor(
    @InjectRepository(GuildRoleEntity) private readonly roles: Repository<GuildRoleEntity>,
    @InjectRepository(GuildMemberEntity) private readonly members: Repository<GuildMemberEntity>,
  ) {}

  private readonly built = new WeakMap<
    GuildContext,
    { entries: unknown; guild: PermissionGuild }
  >();
  private readonly resolvedByGuild = new WeakMap<PermissionGuild, Map<string, string[]>>();

  /**
   * The guild's role entries with its Discord roles, read through the guild's cache, or inside a
   * transaction through its `manager` (what the transaction sees, for checks that must hold when
   * the write is applied).
   */
  async guild(
    context: GuildContext,
    via: GuildSettingsCache | EntityManager,
  ): Promise<PermissionGuild> {
    const load = async (roles: Repository<GuildRoleEntity>): Promise<StoredEntry[]> =>
      (await roles.find({ where: { guild_id: context.guild.id } })).map((e) => ({
        role_id: e.role_id,
        index: e.index,
        perms: e.perms,
      }));
    if (via instanceof EntityManager) {
      return buildGuild(context, await load(via.getRepository(GuildRoleEntity)));
    }
    const entries = await via.get('role-entries', () => load(this.roles));
    // The same context and the same cached entries give the same answer: built once.
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
    const key = `${member.userId}|${member.roles.join(',')}|${member.overrides.join(',')}`;
    let perms = byMember.get(key);
    if (!perms) {
      perms = memberPermissions(guild, member);
      byMember.set(key, perms);
    }
    return perms;
  }

  /**
   * The member's permission data, read through the guild's cache, or inside a transaction through
   * its `manager` (as the transaction sees the row; the embedded database has one connection).
   */
  async member(
    guildId: string,
    userId: string,
    discordRoles: readonly string[],
    via: GuildSettingsCache | EntityManager,
  ): Promise<PermissionMember> {
    const load = async (members: Repository<GuildMemberEntity>): Promise<string[]> => {
      const stored = await members.findOne({ where: { guild_id: guildId, user_id: userId } });
      return stored?.perm_overrides ?? [];
    };
    const overrides =
      via instanceof EntityManager
        ? await load(via.getRepository(GuildMemberEntity))
        : await via.get(`member:${userId}`, () => load(this.members));
    return { userId, roles: discordRoles, overrides };
  }
}

interface StoredEntry {
  role_id: string;
  index: number;
  perms: string[];
}

function buildGuild(context: GuildContext, entries: readonly StoredEntry[]): PermissionGuild {
  return {
    ownerId: context.guild.owner_id,
    roles: context.guild.roles.map((role) => ({ id: role.id, position: role.position })),
    entries: new Map(entries.map((e) => [e.role_id, { index: e.index, perms: e.perms }])),
  };
}
