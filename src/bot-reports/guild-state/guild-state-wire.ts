import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import Ajv, { type ValidateFunction } from 'ajv';
import { setImmediate } from 'node:timers/promises';
import { isISO8601 } from 'class-validator';
import type { FastifyRequest } from 'fastify';
import {
  MAX_STATE_CHANNELS,
  MAX_STATE_REPORTS,
  MAX_STATE_ROLES,
  MAX_STATE_THREADS,
} from 'clients/bot-reporter/src/guild-state';
import {
  BITS,
  GUILD_STATE_REPORT_TYPES,
  GuildStateBatchDto,
  HASH,
  MAX_OVERWRITES,
  NAME_MAX,
  STREAM_ID,
} from 'src/bot-reports/guild-state/dto/guild-state.dto';
import { AppValidationPipe } from 'src/common/validation/app-validation.pipe';
import { SNOWFLAKE_PATTERN } from 'src/common/validation/snowflake';

/**
 * The guild-state feed's wire format as one compiled JSON Schema: the same constraints as the
 * DTOs' (`src/bot-reports/guild-state/dto/guild-state.dto.ts`), or stricter, checked in one pass over the
 * parsed body without a class instance per role, channel, overwrite and thread (which made half
 * of the ingest's CPU, docs/benchmarks.md). A body it refuses goes through the global validation
 * pipe, which names every problem as for any route, and which decides: what this schema refuses
 * and the DTOs accept is accepted.
 */
type Schema = Record<string, unknown>;

const snowflake: Schema = { type: 'string', pattern: SNOWFLAKE_PATTERN.source };
const bits: Schema = { type: 'string', pattern: BITS.source };
const name: Schema = { type: 'string', maxLength: NAME_MAX };
const nullable = (schema: Schema): Schema => ({ anyOf: [{ type: 'null' }, schema] });
const timestamp: Schema = { type: 'string', format: 'timestamp' };
const channelType: Schema = { type: 'integer', minimum: 0, maximum: 255 };
const whole: Schema = { type: 'integer' };
const flags: Schema = { type: 'integer', minimum: 0 };

/** Exactly these properties, every one required unless listed in `optional`. */
function object(properties: Record<string, Schema>, optional: readonly string[] = []): Schema {
  return {
    type: 'object',
    properties,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    additionalProperties: false,
  };
}

const role = object({
  id: snowflake,
  name,
  permissions: bits,
  position: whole,
  managed: { type: 'boolean' },
});
const overwrite = object({ id: snowflake, type: { enum: [0, 1] }, allow: bits, deny: bits });
const channel = object({
  id: snowflake,
  type: channelType,
  name: nullable(name),
  position: whole,
  parent_id: nullable(snowflake),
  flags,
  permission_overwrites: { type: 'array', maxItems: MAX_OVERWRITES, items: overwrite },
});
const thread = object({
  id: snowflake,
  type: channelType,
  name: nullable(name),
  parent_id: snowflake,
  flags,
  archived: { type: 'boolean' },
});
const member = object({
  user_id: snowflake,
  roles: { type: 'array', maxItems: MAX_STATE_ROLES, items: snowflake },
  communication_disabled_until: nullable(timestamp),
});
const fields = { name, icon: nullable(name), owner_id: snowflake };
const guild = object({
  ...fields,
  id: snowflake,
  roles: { type: 'array', maxItems: MAX_STATE_ROLES, items: role },
  channels: { type: 'array', maxItems: MAX_STATE_CHANNELS, items: channel },
  threads: { type: 'array', maxItems: MAX_STATE_THREADS, items: thread },
  bot_member: member,
});
const threads: Schema = { type: 'array', maxItems: MAX_STATE_THREADS, items: thread };

/** Each report type's payload (as the DTO's `ValidateIf`s read it). */
const PAYLOADS: Record<(typeof GUILD_STATE_REPORT_TYPES)[number], Record<string, Schema>> = {
  guild_create: { guild },
  guild_update: { guild: object(fields) },
  guild_delete: { unavailable: { type: 'boolean' } },
  role_upsert: { role },
  role_delete: { role_id: snowflake },
  channel_upsert: { channel },
  channel_delete: { channel_id: snowflake },
  thread_upsert: { thread },
  thread_delete: { thread_id: snowflake },
  thread_list_sync: {
    channel_ids: { type: 'array', maxItems: MAX_STATE_CHANNELS, items: snowflake },
    threads,
  },
  bot_member_update: { member },
};

const report: Schema = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: [...GUILD_STATE_REPORT_TYPES] } },
  allOf: GUILD_STATE_REPORT_TYPES.map((type) => ({
    if: { properties: { type: { const: type } } },
    then: object(
      {
        seq: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        type: { const: type },
        guild_id: snowflake,
        at: timestamp,
        hash: { type: 'string', pattern: HASH.source },
        ...PAYLOADS[type],
      },
      ['hash', 'channel_ids'],
    ),
  })),
};

/** The batch without its reports' contents: those are checked one by one. */
const envelope = object({
  stream: object({
    id: { type: 'string', minLength: 1, maxLength: 64, pattern: STREAM_ID.source },
    started_at: timestamp,
  }),
  reports: { type: 'array', maxItems: MAX_STATE_REPORTS, items: { type: 'object' } },
});

function compile(schema: Schema): ValidateFunction {
  // No `u` flag: the patterns are read as class-validator reads them.
  const ajv = new Ajv({ allErrors: false, strict: true, unicodeRegExp: false });
  // class-validator's own check, so that both read a time alike.
  ajv.addFormat('timestamp', {
    type: 'string',
    validate: (value: string) => isISO8601(value, { strict: true, strictSeparator: true }),
  });
  return ajv.compile(schema);
}

const acceptsEnvelope = compile(envelope);
const acceptsReport = compile(report);
const pipe = new AppValidationPipe();
/** Reports checked between two turns of the event loop (a whole guild counts as 16). */
const VALIDATE_SLICE = 256;
const WHOLE_WEIGHT = 16;

/** Whether the compiled schema accepts the body as it is (what needs no further look). */
export function wireAccepts(body: unknown): boolean {
  return (
    acceptsEnvelope(body) &&
    (body as { reports: unknown[] }).reports.every((item) => acceptsReport(item))
  );
}

/**
 * A batch of the guild-state feed, validated: the body as parsed when the compiled schema accepts
 * it, checked a slice of reports at a time so that other requests are answered in between;
 * otherwise what the global validation pipe makes of it (a 400 naming each problem).
 */
export async function guildStateBatch(body: unknown): Promise<GuildStateBatchDto> {
  if (await acceptedInSlices(body)) return body as GuildStateBatchDto;
  return (await pipe.transform(body, {
    type: 'body',
    metatype: GuildStateBatchDto,
  })) as GuildStateBatchDto;
}

async function acceptedInSlices(body: unknown): Promise<boolean> {
  if (!acceptsEnvelope(body)) return false;
  let weight = 0;
  for (const item of (body as { reports: { type?: unknown }[] }).reports) {
    if (!acceptsReport(item)) return false;
    weight += item.type === 'guild_create' ? WHOLE_WEIGHT : 1;
    if (weight >= VALIDATE_SLICE) {
      weight = 0;
      await setImmediate();
    }
  }
  return true;
}

/** The route's body, validated by {@link guildStateBatch} (documented by `@ApiBody`). */
export const GuildStateBatchBody = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Promise<GuildStateBatchDto> =>
    guildStateBatch(context.switchToHttp().getRequest<FastifyRequest>().body),
);
