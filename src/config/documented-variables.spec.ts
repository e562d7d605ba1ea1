import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { EnvironmentSchema } from 'src/config/environment.schema';

const ROOT = join(__dirname, '..', '..');

/** Every variable the configuration validates: the schema's own list, read from its decorators. */
function declaredVariables(): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(
    EnvironmentSchema,
    '',
    true,
    false,
  );
  return [...new Set(metadata.map((entry) => entry.propertyName))].sort();
}

describe('the configuration variables', () => {
  const variables = declaredVariables();
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
  const docs = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');

  it('are read from the schema (a sanity check of the list itself)', () => {
    expect(variables).toEqual(
      expect.arrayContaining([
        'PORT',
        'DATABASE_URL',
        'RATE_LIMIT_BOT_FEED',
        'GUILD_STATE_MAX_AGE',
      ]),
    );
  });

  it.each(variables)('%s is in .env.example, set or commented out', (name) => {
    expect(example).toMatch(new RegExp(`^(# )?${name}=`, 'm'));
  });

  it.each(variables)('%s is in the table of docs/configuration.md', (name) => {
    expect(docs).toMatch(new RegExp(`^\\| \`${name}\` `, 'm'));
  });
});
