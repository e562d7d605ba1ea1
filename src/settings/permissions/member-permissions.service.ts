import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import type { GuildContext } from 'src/guilds/guild-access.service';
import type { PermissionGuild, PermissionMember } from 'src/settings/permissions/edit-checks';
import { GuildMemberEntity } from 'src/settings/permissions/guild-member.entity';
import { GuildRoleEntity } from 'src/settings/permissions/guild-role.entity';

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

  async guild(context: GuildContext): Promise<PermissionGuild> {
    const entries = await this.roles.find({ where: { guild_id: context.guild.id } });
    return {
      ownerId: context.guild.owner_id,
      roles: context.guild.roles.map((role) => ({ id: role.id, position: role.position })),
      entries: new Map(entries.map((e) => [e.role_id, { index: e.index, perms: e.perms }])),
    };
  }

  /** Inside a transaction, pass its `manager`: the embedded database has a single connection. */
  async member(
    guildId: string,
    userId: string,
    discordRoles: readonly string[],
    manager?: EntityManager,
  ): Promise<PermissionMember> {
    const members = manager ? manager.getRepository(GuildMemberEntity) : this.members;
    const stored = await members.findOne({ where: { guild_id: guildId, user_id: userId } });
    return { userId, roles: discordRoles, overrides: stored?.perm_overrides ?? [] };
  }
}
