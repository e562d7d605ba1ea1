import fc from 'fast-check';
import { DiscordSpec, type SpecSchema } from 'test/support/discord-spec';

/**
 * fast-check arbitraries of the answers Discord's OpenAPI document allows (with its allowlist),
 * built from its schemas, and the variations the platform really sends within it.
 */
export interface Variation {
  /** `required`: only the required fields; `full`: every optional field too; `any`: either, per field. */
  optional: 'required' | 'full' | 'any';
  /** `all`: every nullable field null; `some`: each one may be. */
  nulls: 'all' | 'some' | 'none';
  /** Enum values, flag bits and guild features the document does not list (Discord adds them). */
  unknown: boolean;
  /** Fields the document does not name, on every object. */
  extra: boolean;
}

export const VARIATIONS: Readonly<Record<string, Variation>> = {
  'required fields only': { optional: 'required', nulls: 'none', unknown: false, extra: false },
  'every nullable field null': { optional: 'full', nulls: 'all', unknown: false, extra: false },
  'unknown enum values, flags and features': {
    optional: 'any',
    nulls: 'some',
    unknown: true,
    extra: false,
  },
  'fields the document does not name': {
    optional: 'any',
    nulls: 'some',
    unknown: false,
    extra: true,
  },
  'all optional fields': { optional: 'full', nulls: 'none', unknown: false, extra: false },
};

/** The answers of the routes the service reads, as the document describes them. */
export function answerSchemas(): {
  user: SpecSchema;
  guildList: SpecSchema;
  guild: SpecSchema;
  channels: SpecSchema;
  threads: SpecSchema;
  member: SpecSchema;
  ownMember: SpecSchema;
  role: SpecSchema;
} {
  const spec = DiscordSpec.get();
  return {
    user: spec.answerSchema('GET', '/users/@me'),
    guildList: spec.answerSchema('GET', '/users/@me/guilds'),
    guild: spec.answerSchema('GET', '/guilds/{guild_id}'),
    channels: spec.answerSchema('GET', '/guilds/{guild_id}/channels'),
    threads: spec.answerSchema('GET', '/guilds/{guild_id}/threads/active'),
    member: spec.answerSchema('GET', '/guilds/{guild_id}/members/{user_id}'),
    ownMember: spec.answerSchema('GET', '/users/@me/guilds/{guild_id}/member'),
    role: spec.schema('GuildRoleResponse'),
  };
}

/** The schema of a list's items. */
export function itemsOf(schema: SpecSchema): SpecSchema {
  if (!schema.items) throw new Error('not a list');
  return schema.items;
}

/** How deep `$ref`s are followed before optional fields stop and lists are empty. */
const MAX_DEPTH = 4;
const INT32 = 2 ** 31;

/**
 * An id as the document allows them: any unsigned 64-bit integer (`SnowflakeType`), 0 and 2^64-1
 * included, beyond the 2^63 the platform's 42-bit clock from 2015 reaches in 2084.
 */
export const snowflakeArbitrary: fc.Arbitrary<string> = fc
  .bigInt({ min: 0n, max: (1n << 64n) - 1n })
  .map(String);

/** An answer `schema` allows, varied by `variation`. */
export function answerOf(schema: SpecSchema, variation: Variation): fc.Arbitrary<unknown> {
  return arbitrary(schema, variation, 0, '');
}

function arbitrary(
  schema: SpecSchema,
  variation: Variation,
  depth: number,
  name: string,
): fc.Arbitrary<unknown> {
  const spec = DiscordSpec.get();
  if (schema.$ref) {
    if (schema.$ref.endsWith('/SnowflakeType')) return snowflakeArbitrary;
    return arbitrary(spec.resolve(schema.$ref), variation, depth + 1, name);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return enumOf(schema.enum, variation);
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) {
    if (branches.every((branch) => branch.const !== undefined)) {
      return enumOf(
        branches.map((branch) => branch.const),
        variation,
      );
    }
    const nullable = branches.some((branch) => branch.type === 'null');
    const others = branches.filter((branch) => branch.type !== 'null');
    const value = fc.oneof(...others.map((b) => arbitrary(b, variation, depth, name)));
    return nullable ? orNull(value, variation) : value;
  }
  if (schema.allOf) {
    return arbitrary(Object.assign({}, ...schema.allOf) as SpecSchema, variation, depth, name);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? 'object'];
  const type = types.find((t) => t !== 'null') ?? 'null';
  if (type === 'null') return fc.constant(null);
  const value = ofType(type, schema, variation, depth, name);
  return types.includes('null') ? orNull(value, variation) : value;
}

function ofType(
  type: string,
  schema: SpecSchema,
  variation: Variation,
  depth: number,
  name: string,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return integerOf(schema, variation, name);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      if (depth >= MAX_DEPTH || !schema.items) return fc.constant([]);
      const items = arbitrary(schema.items, variation, depth + 1, name);
      const maxLength = Math.min(schema.maxItems ?? 3, 3);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { maxLength });
    }
    case 'object':
      return objectOf(schema, variation, depth);
    default:
      throw new Error(`no arbitrary for type ${type}`);
  }
}

function objectOf(schema: SpecSchema, variation: Variation, depth: number): fc.Arbitrary<unknown> {
  const required = new Set(schema.required ?? []);
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  const optional: string[] = [];
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (!required.has(key)) {
      if (variation.optional === 'required' || depth >= MAX_DEPTH) continue;
      optional.push(key);
    }
    fields[key] = arbitrary(property, variation, depth + 1, key);
  }
  const record = fc.record(fields, {
    requiredKeys:
      variation.optional === 'any' ? [...required].filter((k) => k in fields) : undefined,
  });
  if (!variation.extra) return record;
  return fc
    .tuple(
      record,
      fc.dictionary(fc.stringMatching(/^new_[a-z_]{1,12}$/), fc.jsonValue({ maxDepth: 2 }), {
        maxKeys: 3,
      }),
    )
    .map(([known, added]) => ({ ...added, ...known }));
}

/** One of `values`; with `unknown`, also a value Discord has not listed yet. */
function enumOf(values: unknown[], variation: Variation): fc.Arbitrary<unknown> {
  const known = fc.constantFrom(...values);
  if (!variation.unknown) return known;
  const unknown: fc.Arbitrary<unknown> =
    typeof values[0] === 'number'
      ? fc.integer({ min: 100, max: 999 })
      : fc.stringMatching(/^[A-Z][A-Z0-9_]{2,20}$/);
  return fc.oneof(known, unknown);
}

function stringOf(schema: SpecSchema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') {
    return fc
      .date({
        min: new Date('2015-01-01T00:00:00Z'),
        max: new Date('2100-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
  }
  if (schema.format === 'uri') return fc.webUrl();
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  return fc.string({
    minLength: schema.minLength ?? 0,
    maxLength: Math.min(schema.maxLength ?? 16, 16),
  });
}

function integerOf(schema: SpecSchema, variation: Variation, name: string): fc.Arbitrary<number> {
  // Flags: every bit the field can hold, the unknown ones included.
  if (variation.unknown && /flags$/.test(name)) return fc.integer({ min: 0, max: INT32 - 1 });
  const min = schema.minimum ?? (schema.format === 'int32' ? -INT32 : Number.MIN_SAFE_INTEGER);
  const max = schema.maximum ?? (schema.format === 'int32' ? INT32 - 1 : Number.MAX_SAFE_INTEGER);
  return fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, 1e9) });
}

function orNull(value: fc.Arbitrary<unknown>, variation: Variation): fc.Arbitrary<unknown> {
  if (variation.nulls === 'all') return fc.constant(null);
  if (variation.nulls === 'none') return value;
  return fc.option(value, { nil: null });
}

/**
 * `value` with only what `schema` requires, and the fields named in `keep` wherever they stand:
 * the same answer without its optional fields.
 */
export function requiredOnly(
  schema: SpecSchema,
  value: unknown,
  keep: ReadonlySet<string>,
): unknown {
  const spec = DiscordSpec.get();
  if (schema.$ref) return requiredOnly(spec.resolve(schema.$ref), value, keep);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    return schema.items
      ? value.map((item) => requiredOnly(schema.items as SpecSchema, item, keep))
      : value;
  }
  const branches = schema.oneOf ?? schema.anyOf ?? schema.allOf;
  if (branches) {
    // The branch the value matches (a oneOf of shapes: channels), else the value as it is.
    const match = branches.find((branch) => branchMatches(branch, value));
    return match ? requiredOnly(match, value, keep) : value;
  }
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => required.has(key) || keep.has(key))
      .map(([key, field]) => {
        const property = schema.properties?.[key];
        return [key, property ? requiredOnly(property, field, keep) : field];
      }),
  );
}

function branchMatches(branch: SpecSchema, value: object): boolean {
  const schema = branch.$ref ? DiscordSpec.get().resolve(branch.$ref) : branch;
  return (schema.required ?? []).every((key) => key in value);
}

/** A permission bitfield, as the platform writes one: a decimal string, bits beyond today's too. */
export const bitfield = fc.bigInt({ min: 0n, max: (1n << 60n) - 1n }).map(String);

export type Json = Record<string, unknown>;

/** A guild's answers, each allowed by the document, about one coherent guild. */
export interface GuildWorld {
  guild: Json;
  channels: Json[];
  threads: Json;
  bot: Json;
  user: Json;
}

/**
 * Answers from the document's schemas, their ids and bitfields then made to agree (the guild's
 * @everyone role, roles the members hold, parents and overwrites that name them), as one guild's
 * answers do.
 */
export function guildWorldOf(
  variation: Variation,
  fixed: { guildId?: string; botId?: string; userId?: string } = {},
): fc.Arbitrary<GuildWorld> {
  const schemas = answerSchemas();
  return fc
    .record({
      ids: fc.uniqueArray(snowflakeArbitrary, { minLength: 16, maxLength: 16 }),
      guild: answerOf(schemas.guild, variation),
      roles: fc.array(answerOf(schemas.role, variation), { minLength: 1, maxLength: 4 }),
      channels: fc.array(answerOf(itemsOf(schemas.channels), variation), { maxLength: 5 }),
      threads: answerOf(schemas.threads, variation),
      bot: answerOf(schemas.member, variation),
      user: answerOf(schemas.member, variation),
      bits: fc.array(bitfield, { minLength: 30, maxLength: 30 }),
      picks: fc.array(fc.nat(), { minLength: 30, maxLength: 30 }),
      owner: fc.constantFrom('bot', 'user', 'other'),
    })
    .map(({ ids, guild, roles, channels, threads, bot, user, bits, picks, owner }) => {
      const guildId = fixed.guildId ?? ids[0];
      const botId = fixed.botId ?? ids[1];
      const userId = fixed.userId ?? ids[2];
      const otherId = ids[3];
      const roleIds = [guildId, ...ids.slice(4, 7)].slice(0, roles.length);
      const channelIds = ids.slice(7, 12);
      const threadIds = ids.slice(12, 16);
      let next = 0;
      const bit = (): string => bits[next++ % bits.length];
      const pick = <T>(from: readonly T[]): T => from[picks[next++ % picks.length] % from.length];
      const overwrites = (item: Json): Json => {
        if (!Array.isArray(item.permission_overwrites)) return item;
        const named = [...roleIds.map((id) => [id, 0] as const), [botId, 1], [userId, 1]] as const;
        return {
          ...item,
          permission_overwrites: (item.permission_overwrites as Json[]).map((o) => {
            const [id, type] = pick(named);
            // An overwrite type the document does not list keeps its value: the algorithm must
            // skip it, not misread it.
            return {
              ...o,
              id,
              type: o.type === 0 || o.type === 1 ? type : o.type,
              allow: bit(),
              deny: bit(),
            };
          }),
        };
      };
      const member = (m: Json, id: string): Json => ({
        ...m,
        user: { ...(m.user as Json), id },
        roles: roleIds.slice(1).filter(() => pick([true, false])),
      });
      const threadList = threads as Json;
      return {
        guild: {
          ...(guild as Json),
          id: guildId,
          owner_id: { bot: botId, user: userId, other: otherId }[owner],
          roles: (roles as Json[]).map((role, i) => ({
            ...role,
            id: roleIds[i],
            permissions: bit(),
          })),
        },
        channels: (channels as Json[]).map((c, i) =>
          overwrites({ ...c, id: channelIds[i], ...parentOf(c, pick([null, ...channelIds])) }),
        ),
        threads: {
          ...threadList,
          threads: (threadList.threads as Json[]).map((t, i) =>
            overwrites({ ...t, id: threadIds[i], ...parentOf(t, pick(channelIds)) }),
          ),
        },
        bot: member(bot as Json, botId),
        user: member(user as Json, userId),
      };
    });
}

/** A parent as the generated answer had one: absent stays absent, null stays null. */
function parentOf(item: Json, parent: string | null): Json {
  return item.parent_id === undefined || item.parent_id === null ? {} : { parent_id: parent };
}

/**
 * `GET /users/@me/guilds` answers: as the document allows them (its `permissions` any string, the
 * list itself nullable), or with permissions as the platform writes them, decimal bitfields.
 */
export function guildListOf(variation: Variation): fc.Arbitrary<unknown> {
  const schema = answerSchemas().guildList;
  return fc.oneof(
    answerOf(schema, variation),
    fc
      .array(fc.tuple(answerOf(itemsOf(schema), variation), bitfield), { maxLength: 3 })
      .map((guilds) => guilds.map(([guild, permissions]) => ({ ...(guild as Json), permissions }))),
  );
}
