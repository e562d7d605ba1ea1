// Module boundaries of src/, checked by `npm run deps:check` (CI) and drawn by `npm run deps:graph`.
//
// Layers, lowest first: common (no imports from src outside itself), config, database, then the
// feature folders, then the composition roots (main, app.module, app.setup, cli, cli.module).
// Feature folders form a graph without loops, and a feature uses another only through the files
// listed in PUBLIC_API below: its Nest module, the services that module exports, its CLI commands
// (for cli.module), and the types,
// events, entities and pure helpers meant for others. Everything else in a folder is its own.

// A CommonJS file (dependency-cruiser reads it with require), hence require here too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { readdirSync } = require('node:fs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { join } = require('node:path');

/** What each feature folder offers the others (paths relative to the folder, without `.ts`). */
const PUBLIC_API = {
  auth: [
    'auth.module',
    'authorization-header',
    'grant.service',
    'guild-scope.guard',
    'root-user.guard',
    'session-auth.guard',
    'session-request',
  ],
  users: ['users.module', 'users.service', 'users.events', 'user.entity', 'users.cli'],
  sessions: [
    'sessions.module',
    'sessions.service',
    'sessions.events',
    'sessions.cli',
    'dto/session.dto',
  ],
  platform: [
    'platform.module',
    'platform.client',
    'platform.service',
    'platform.errors',
    'platform.types',
    'platform-cache',
    // Demo mode: the emulator's bot reports its guilds through the membership feed.
    'platform-connection',
    'emulator/emulator.state',
    // The demo world's ids, for examples that work in the demo (settings' samples).
    'emulator/demo.seed',
  ],
  // The bot's reports: where the bot is and what it sees (guild access), the shards' state and
  // its changes (event streams).
  'bot-reports': [
    'bot-reports.module',
    'bot-membership.service',
    'guild-state/guild-state.service',
    'shard-stats/stats.service',
    'shard-stats/stats.events',
    'shard-stats/shard-stats',
    'shard-stats/dto/bot-stats.dto',
  ],
  guilds: [
    'guilds.module',
    'guild-access.service',
    'guild-context',
    'platform-permissions',
    'role-hierarchy',
  ],
  // A guild route's permission, and `PermissionsService.may` for any module that asks.
  permissions: ['permissions.module', 'require-permission.decorator', 'permissions.service'],
  // The settings engine's declaration kit: what a module needs to declare a setting of its own,
  // and what the engine needs of the permission model (`SettingsPermissions`, which permissions/
  // provides); and the per-setting request schemas it adds to the OpenAPI document.
  settings: [
    'settings.module',
    'schema/settings-definition',
    'schema/settings-permissions',
    'schema/guild-checks',
    'schema/columns',
    'settings-openapi',
    'settings.cli',
    // What event streams read: committed changes, and the revisions to resume from.
    'engine/settings.events',
    'revisions/revision-feed.service',
  ],
  commands: ['commands.module', 'commands.cli'],
  health: ['health.module'],
  'client-config': ['client-config.module'],
  metrics: ['metrics.module'],
  events: ['events.module'],
};

const FOUNDATION = ['common', 'config', 'database'];
/**
 * Every folder of src/ above the foundation is a feature; one PUBLIC_API leaves out offers its Nest
 * module only (`<folder>.module`), so a new module needs no line here until others use more of it.
 */
const FEATURES = readdirSync(join(__dirname, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !FOUNDATION.includes(entry.name))
  .map((entry) => entry.name);
for (const feature of FEATURES) PUBLIC_API[feature] ??= [`${feature}.module`];
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
const anyOf = (names) => `(${names.map(escape).join('|')})`;

/** One rule per feature: other features may import only its public files. */
const internalsRules = FEATURES.map((feature) => ({
  name: `no-${feature}-internals`,
  severity: 'error',
  comment: `Other modules use ${feature}/ only through ${PUBLIC_API[feature].join(', ')}. Import one of those, or add the file to PUBLIC_API in .dependency-cruiser.js if it is meant for other modules.`,
  from: { path: '^src/', pathNot: `^src/${escape(feature)}/` },
  to: {
    path: `^src/${escape(feature)}/`,
    pathNot: `^src/${escape(feature)}/${anyOf(PUBLIC_API[feature])}\\.ts$`,
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files import each other in a loop.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-feature-folder-loop',
      severity: 'error',
      // Folder scope sees sub-folders as folders of their own; scripts/module-graph.ts (also run
      // by deps:check) checks loops between top-level folders.
      comment:
        'Feature folders depend on each other in a loop: move the shared piece into the lower module, or announce the change as an event.',
      scope: 'folder',
      from: { path: `^src/${anyOf(FEATURES)}` },
      to: { path: `^src/${anyOf(FEATURES)}`, circular: true },
    },
    {
      name: 'common-is-the-base',
      severity: 'error',
      comment:
        'common/ imports nothing from src/ outside itself; modules there take settings through forRoot.',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    {
      name: 'config-imports-only-common',
      severity: 'error',
      comment: 'config/ may build on common/ only.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(common|config)/' },
    },
    {
      name: 'database-imports-only-foundation',
      severity: 'error',
      comment: 'database/ may build on common/ and config/ only.',
      from: { path: '^src/database/' },
      to: { path: '^src/', pathNot: `^src/${anyOf(FOUNDATION)}/` },
    },
    {
      name: 'no-composition-root-imports',
      severity: 'error',
      comment: 'Only the entry points import the root modules (app.module, app.setup, cli.module).',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    ...internalsRules,
    {
      name: 'no-test-material-in-src',
      severity: 'error',
      comment: 'The service does not import tests, fixtures or benchmarks.',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'not-to-dev-dependencies',
      severity: 'error',
      comment: 'The service must run with production dependencies only.',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Unit tests sit beside their code and may reach into it; the rules are about the service.
    exclude: { path: ['^dist/', '\\.spec\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: {
      mermaid: { minify: false },
    },
  },
};
