import type { DiscoveryService } from '@nestjs/core';
import { GuildRolesSetting } from 'src/settings/builtins/guildroles.setting';
import type { SettingProvider } from 'src/settings/setting-definition';
import { InvalidSettingsError, SettingsRegistry } from 'src/settings/settings-registry';

function registryOf(...providers: SettingProvider[]): SettingsRegistry {
  const discovery = {
    getProviders: () => providers.map((instance) => ({ instance })),
  } as unknown as DiscoveryService;
  return new SettingsRegistry(discovery);
}

describe('the settings registry at boot', () => {
  it('serves the declared settings with their validation_template', () => {
    const registry = registryOf(new GuildRolesSetting());
    registry.onModuleInit();
    const setting = registry.get('guildroles');
    expect(setting?.group).toBe('permissions');
    expect(JSON.parse(setting?.validationTemplate ?? '{}')).toMatchObject({
      $defs: { Reorder: { type: 'array' } },
    });
  });

  it('refuses to boot with an inconsistent declaration, naming the setting', () => {
    const broken = new GuildRolesSetting();
    const definition = {
      ...broken.definition,
      schema: { ...broken.definition.schema, index_by: 'rank' },
    };
    const registry = registryOf({ definition });
    expect(() => registry.onModuleInit()).toThrow(InvalidSettingsError);
    expect(() => registry.onModuleInit()).toThrow('guildroles: index_by "rank" is not a column');
  });

  it('refuses two declarations of one setting', () => {
    const registry = registryOf(new GuildRolesSetting(), new GuildRolesSetting());
    expect(() => registry.onModuleInit()).toThrow('guildroles: declared by two modules');
  });
});
