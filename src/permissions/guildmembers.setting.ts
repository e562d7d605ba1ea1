import { Injectable } from '@nestjs/common';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { array, auditColumns, scalar, text } from 'src/settings/schema/columns';
import { verifyMemberOverrideChange } from 'src/permissions/edit-checks';
import { authorizationOf } from 'src/permissions/edit-denials';
import { GuildMemberEntity } from 'src/permissions/guild-member.entity';
import { canonicalList } from 'src/permissions/permission-string';
import {
  DeclareSetting,
  type SettingDefinition,
  type SettingProvider,
  type SettingRow,
} from 'src/settings/schema/settings-definition';

/** Permission strings given to one member directly, on top of their roles' entries. */
@DeclareSetting()
@Injectable()
export class GuildMembersSetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'permissions',
    entity: GuildMemberEntity,
    // Works in the demo guild: Swagger UI's example bodies, and the suite's walk (checked at boot).
    samples: {
      create: { user_id: DEMO_IDS.carol, perm_overrides: ['rpc.kick'] },
      update: { perm_overrides: [] },
    },
    schema: {
      id: 'guildmembers',
      name: 'Member permissions',
      description:
        "Permission overrides for single members. They rank between the roles' entries with a positive index and those with a negative one.",
      icon: 'mdi:account-key',
      index_by: null,
      operations: ['View', 'Create', 'Update', 'Delete'],
      columns: [
        scalar('user_id', 'Member', text('user'), { description: 'The member', primaryKey: true }),
        array('perm_overrides', 'Permission overrides', text('permission'), {
          description: 'Permission strings, e.g. rpc.kick, ~guildroles.delete',
          placeholder: 'rpc.kick',
        }),
        ...auditColumns(),
      ],
      title_template: 'Member {{user_id}}',
      view_template: '{{user_id}}: {{perm_overrides}}',
      postsend_template: 'Overrides of member {{user_id}} saved',
      footer: null,
    },
    // Stored in canonical form (`test` → `global.test`).
    prepare: (fields) =>
      Array.isArray(fields.perm_overrides)
        ? { ...fields, perm_overrides: canonicalList(fields.perm_overrides as string[]) }
        : fields,
    authorize: async ({ operation, fields, current, guild, author, memberOf }) => {
      const row = fields as SettingRow;
      const target = await memberOf(row.user_id as string);
      if (operation === 'Delete')
        return authorizationOf(verifyMemberOverrideChange(guild, author, target, { op: 'Delete' }));
      if (operation !== 'Create' && operation !== 'Update') return { allowed: true };
      const overrides = (row.perm_overrides ?? current[0]?.perm_overrides ?? []) as string[];
      return authorizationOf(
        verifyMemberOverrideChange(guild, author, target, { op: operation, overrides }),
      );
    },
  };
}
