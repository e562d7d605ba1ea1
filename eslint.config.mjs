// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** class-transformer's decorators: the validation pipe must know which classes use them. */
const CLASS_TRANSFORMER_DECORATORS = {
  name: 'class-transformer',
  importNames: ['Type', 'Transform', 'Expose', 'Exclude'],
  message:
    "Import them from 'src/common/validation/transform-decorators', which marks their classes for the validation pipe.",
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'coverage/**',
      'node_modules/**',
      '.data/**',
      'test-artifacts/**',
      // Generated from openapi.json (npm run client:generate).
      'clients/typescript/src/schema.d.ts',
      // A client package's build (npm pack, npm install from its folder).
      'clients/*/dist/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/explicit-function-return-type': [
        'error',
        { allowExpressions: true, allowTypedFunctionExpressions: true },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [CLASS_TRANSFORMER_DECORATORS],
          patterns: [
            { group: ['../*'], message: 'Import through the src/ or test/ alias.' },
            {
              group: ['class-transformer/*'],
              message: "class-transformer's files are private: import from 'class-transformer'.",
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports only.' },
        {
          selector:
            "NewExpression[callee.name='LRUCache'] > ObjectExpression > Property[key.name='max']",
          message:
            'lru-cache reserves storage for `max` entries at construction: bound the cache with entryBound() (src/common/cache/lru-bounds).',
        },
        {
          selector:
            "CallExpression[callee.property.name='setHeader'][callee.object.property.name='raw']",
          message:
            "Set response headers through Fastify's reply (reply.header): one header set on the raw response sends every header of the answer through Node's slow per-header path.",
        },
      ],
    },
  },
  {
    // The one place that wraps class-transformer's decorators.
    files: ['src/common/validation/transform-decorators.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // Tests assert on loosely typed HTTP bodies.
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/explicit-function-return-type': 'off',
      'no-restricted-syntax': 'off',
    },
  },
  {
    // CommonJS examples load packages as CommonJS does.
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
