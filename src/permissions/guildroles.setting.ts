import { Injectable } from '@nestjs/common';
import { DEMO_ROLES } from 'src/platform/emulator/demo.seed';
import { array, auditColumns, scalar, text } from 'src/settings/schema/columns';
import { verifyRoleEntryChange, type RoleEdit } from 'src/permissions/edit-checks';
import { authorizationOf } from 'src/permissions/edit-denials';
import { GuildRoleEntity } from 'src/permissions/guild-role.entity';
import { canonicalList } from 'src/permissions/permission-string';
import {
  DeclareSetting,
  type AuthorizationRequest,
  type SettingDefinition,
  type SettingProvider,
  type SettingRow,
} from 'src/settings/schema/settings-definition';

/** Permission strings granted to everyone holding a Discord role, ranked by `index`. */
@DeclareSetting()
@Injectable()
export class GuildRolesSetting implements SettingProvider {
  readonly definition: SettingDefinition = {
    group: 'permissions',
    entity: GuildRoleEntity,
    // Works in the demo guild: Swagger UI's example bodies, and the suite's walk (checked at boot).
    samples: {
      create: { role_id: DEMO_ROLES.helper, perms: ['rpc.view', 'rpc.kick'], index: 5 },
      update: { perms: ['rpc.view'] },
    },
    schema: {
      id: 'guildroles',
      name: 'Role permissions',
      description:
        "The bot's permissions each Discord role grants. A lower index ranks higher: it wins conflicts and may manage the entries below it.",
      icon: 'mdi:shield-account',
      index_by: 'index',
      operations: ['View', 'Create', 'Update', 'Delete'],
      columns: [
        scalar('role_id', 'Role', text('role'), {
          description: 'The Discord role',
          primaryKey: true,
        }),
        array('perms', 'Permissions', text('permission'), {
          description: 'Permission strings, e.g. guildroles.view, rpc.*, ~rpc.ban',
          placeholder: 'guildroles.view',
        }),
        scalar(
          'index',
          'Index',
          { type: 'Integer', min: -1000, max: 1000 },
          {
            description: 'Rank: a lower index is more senior',
          },
        ),
        ...auditColumns(),
      ],
      title_template: 'Role {{role_id}}',
      view_template: '{{role_id}}: {{perms}} (index {{index}})',
      postsend_template: 'Permissions of role {{role_id}} saved',
      footer: { end_text: 'Drag entries to change their rank; the top one is the most senior.' },
    },
    // Stored in canonical form (`test` → `global.test`).
    prepare: (fields) =>
      Array.isArray(fields.perms)
        ? { ...fields, perms: canonicalList(fields.perms as string[]) }
        : fields,
    authorize: (request) =>
      authorizationOf(verifyRoleEntryChange(request.guild, request.author, roleEdit(request))),
  };
}

function roleEdit({ operation, fields, current }: AuthorizationRequest): RoleEdit {
  if (operation === 'Reorder') {
    const items = fields as { role_id: string; index: number }[];
    return {
      op: 'Reorder',
      items: items.map((item) => ({ roleId: item.role_id, index: item.index })),
    };
  }
  const row = fields as SettingRow;
  const roleId = row.role_id as string;
  if (operation === 'Delete') return { op: 'Delete', roleId };
  if (operation === 'View') return { op: 'View' };
  const stored = current[0] ?? {};
  return {
    op: operation,
    roleId,
    index: (row.index ?? stored.index) as number,
    perms: (row.perms ?? stored.perms ?? []) as string[],
  };
}
