// Three tiers in one run: pure unit tests and service tests beside the code (no database, no
// HTTP), and HTTP-level e2e tests in test/.
/* eslint-disable @typescript-eslint/no-require-imports -- Jest loads this file as CommonJS */
const { statfsSync } = require('node:fs');
const { availableParallelism } = require('node:os');
/* eslint-enable @typescript-eslint/no-require-imports */

// Scratch files go to memory (/dev/shm) when the machine has room there: every test database is a
// copy of a data directory of tens of MB, which costs ten times as much on a disk. Set before the
// workers start, so they inherit it; a TMPDIR of one's own is kept.
if (!process.env.TMPDIR) {
  try {
    const shm = statfsSync('/dev/shm');
    if (shm.bavail * shm.bsize >= 2 * 2 ** 30) process.env.TMPDIR = '/dev/shm';
  } catch {
    // No /dev/shm (macOS, Windows): the system's temporary directory.
  }
}
const shared = {
  moduleFileExtensions: ['ts', 'js', 'json'],
  rootDir: __dirname,
  // Type checking is `npm run typecheck`; tests only transpile, per file.
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
  },
  moduleNameMapper: {
    '^(src|test|clients)/(.*)$': '<rootDir>/$1/$2',
    // The client packages' ES modules import their siblings as Node.js resolves them, by the
    // emitted file (`./contract.js`); here the sibling is still the .ts source.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
};

// The tiers to run, for `npm run test:unit|service|e2e|quick` (a comma list of project names; all of
// them when unset). Chosen here rather than with `--selectProjects`, which takes every word after it
// as a project name, so `npm run test:e2e -- test/settings/revisions` would run no file or all.
const tiers = process.env.TEST_TIERS?.split(',').filter(Boolean);

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60_000,
  // A worker per core, two at least: the e2e files spend much of their time waiting on sockets,
  // timers and child processes (Jest's default, one core less, runs a 2-core machine in band).
  maxWorkers: Math.max(2, availableParallelism()),
  projects: selectTiers([
    {
      ...shared,
      displayName: 'unit',
      // clients/ and examples/: the client packages' and the examples' own tests (no server).
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/clients/**/*.spec.ts',
        '<rootDir>/examples/**/*.spec.ts',
      ],
      testPathIgnorePatterns: ['\\.service\\.spec\\.ts$'],
    },
    // A service with its real collaborators and, for the rows it stores, the real database
    // (test/support/service-database.ts); the platform, and lookups a test must time, are faked.
    { ...shared, displayName: 'service', testMatch: ['<rootDir>/src/**/*.service.spec.ts'] },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // Every answer the suite receives is checked against openapi.json.
      setupFilesAfterEnv: ['<rootDir>/test/support/contract-setup.ts'],
      // Each e2e file boots the application on a fresh database.
      slowTestThreshold: 30,
    },
  ]),
};

/** The projects named by TEST_TIERS, in their order; an unknown name fails loudly. */
function selectTiers(projects) {
  if (!tiers) return projects;
  const names = projects.map((project) => project.displayName);
  const unknown = tiers.filter((tier) => !names.includes(tier));
  if (unknown.length > 0) {
    throw new Error(`TEST_TIERS names ${unknown.join(', ')}; the tiers are ${names.join(', ')}`);
  }
  return projects.filter((project) => tiers.includes(project.displayName));
}
