import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'src/common/validation/transform-decorators';
import { getMetadataStorage, IsString, ValidateNested, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { AppModule } from 'src/app.module';
import { createHttpAdapter } from 'src/app.setup';
import { loadConfig } from 'src/config/app-config';
import { AppValidationPipe, toDtoInstance } from 'src/common/validation/app-validation.pipe';
import { ExecuteSettingDto } from 'src/settings/dto/execute-setting.dto';
import { AppException } from 'src/common/errors/app.exception';

/** Every validation rule registered by the classes the application loads. */
function registeredRules(): ValidationMetadata[] {
  // The storage keeps its rules in a private map; this test reads it to see them all.
  const storage = getMetadataStorage() as unknown as {
    validationMetadatas: Map<unknown, ValidationMetadata[]>;
  };
  return [...storage.validationMetadatas.values()].flat();
}

describe('AppValidationPipe', () => {
  const pipe = new AppValidationPipe();
  const body = { type: 'body' as const, metatype: ExecuteSettingDto, data: '' };

  it('validates synchronously, so no registered constraint may be asynchronous', () => {
    // Loading the module graph registers every DTO's rules.
    expect(AppModule).toBeDefined();
    const rules = registeredRules();
    expect(rules.length).toBeGreaterThan(50);
    const storage = getMetadataStorage();
    const constraints = rules
      .filter((rule) => rule.type === ValidationTypes.CUSTOM_VALIDATION && rule.constraintCls)
      .flatMap((rule) => storage.getTargetValidatorConstraints(rule.constraintCls));
    // The scan sees custom constraints (the configuration's, among others)...
    expect(constraints.map((constraint) => constraint.name)).toContain('databaseUrl');
    // ...and none of them is asynchronous.
    const asynchronous = constraints.filter((constraint) => constraint.async);
    expect(asynchronous.map((constraint) => constraint.name)).toEqual([]);
  });

  it('returns the DTO instance for a valid body', async () => {
    const value = await pipe.transform(
      { setting: 'guildroles', operation: 'View', fields: {} },
      body,
    );
    expect(value).toBeInstanceOf(ExecuteSettingDto);
    expect(value).toEqual({ setting: 'guildroles', operation: 'View', fields: {} });
  });

  it('refuses a bad body with one detail per field', async () => {
    const refusal = pipe.transform({ setting: 7, operation: 'Drop', extra: true }, body);
    await expect(refusal).rejects.toBeInstanceOf(AppException);
    await expect(refusal).rejects.toMatchObject({
      details: expect.arrayContaining([
        expect.objectContaining({ field: 'setting' }),
        expect.objectContaining({ field: 'operation' }),
        expect.objectContaining({ field: 'fields' }),
        expect.objectContaining({ field: 'extra' }),
      ]),
    });
  });

  it('tells each field what is wrong first: missing, then the wrong type, then a rule', async () => {
    await expect(pipe.transform({ setting: 7, operation: 'View' }, body)).rejects.toMatchObject({
      details: [
        { field: 'setting', message: 'setting must be a string' },
        { field: 'fields', message: expect.stringMatching(/^fields is required/) },
      ],
    });
    await expect(pipe.transform({ operation: 'View', fields: {} }, body)).rejects.toMatchObject({
      message: 'Invalid request: setting is required',
      details: [{ field: 'setting', message: 'setting is required' }],
    });
  });

  it.each([
    [[], 'an array'],
    [null, 'null'],
    ['View', 'a string'],
    [7, 'a number'],
    [undefined, 'nothing'],
  ])('refuses a body of %p: it must be a JSON object', (value, what) => {
    const message = `The request body must be a JSON object, not ${what}`;
    expect(() => pipe.transform(value, body)).toThrow(
      expect.objectContaining({
        code: 'BadRequest',
        message,
        details: [{ field: 'body', message }],
      }),
    );
  });

  it('hands values it does not validate to the route as they came', async () => {
    const session = { userId: '1' };
    expect(pipe.transform(session, { type: 'custom', metatype: Object, data: '' })).toBe(session);
    expect(pipe.transform('0042', { type: 'param', metatype: String, data: 'id' })).toBe('0042');
    const untyped = { any: 'thing' };
    expect(pipe.transform(untyped, { type: 'body', metatype: undefined, data: '' })).toBe(untyped);
    // A DTO parameter is validated: a promise of the instance.
    await expect(
      pipe.transform({ setting: 'a', operation: 'View', fields: {} }, body),
    ).resolves.toBeInstanceOf(ExecuteSettingDto);
  });
});

describe('toDtoInstance', () => {
  it('makes a JSON object an instance of the class with the same own fields', () => {
    const plain = { setting: 'x', operation: 'View', fields: { limit: 2 } };
    const instance = toDtoInstance(ExecuteSettingDto, plain);
    expect(instance).toBeInstanceOf(ExecuteSettingDto);
    expect({ ...instance }).toEqual(plain);
    expect(toDtoInstance(ExecuteSettingDto, Object.assign(Object.create(null), { a: 1 }))).toEqual(
      Object.assign(new ExecuteSettingDto(), { a: 1 }),
    );
  });

  it('leaves arrays, primitives and a `constructor` field to class-transformer', () => {
    const items = toDtoInstance(ExecuteSettingDto, [{ setting: 'x' }]);
    expect(Array.isArray(items)).toBe(true);
    expect((items as ExecuteSettingDto[])[0]).toBeInstanceOf(ExecuteSettingDto);
    expect(toDtoInstance(ExecuteSettingDto, 'text')).toBe('text');
    expect(toDtoInstance(ExecuteSettingDto, null)).toBeNull();
    const poisoned = toDtoInstance(ExecuteSettingDto, { constructor: 1, setting: 'x' });
    expect(poisoned).toBeInstanceOf(ExecuteSettingDto);
  });
});

class NestedTagDto {
  @IsString()
  label!: string;
}

class WithNestedDto {
  @ValidateNested({ each: true })
  @Type(() => NestedTagDto)
  tags!: NestedTagDto[];
}

describe('toDtoInstance for a class with transformation rules', () => {
  it('lets class-transformer build nested instances', () => {
    const instance = toDtoInstance(WithNestedDto, { tags: [{ label: 'x' }] }) as WithNestedDto;
    expect(instance).toBeInstanceOf(WithNestedDto);
    expect(instance.tags[0]).toBeInstanceOf(NestedTagDto);
  });
});

describe('the values the pipe sees', () => {
  it('never holds a sparse array: the query parser does not read indices (JSON has none)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'bms-query-'));
    const config = loadConfig({ DATABASE_URL: 'memory://', LOG_LEVEL: 'silent' }, directory);
    const fastify = createHttpAdapter(config).getInstance();
    fastify.get('/echo', (request) => request.query);
    try {
      const answer = await fastify.inject({ url: '/echo?tags[3]=a&tags=b&tags=c&n[]=1' });
      expect(answer.json()).toEqual({ 'tags[3]': 'a', tags: ['b', 'c'], 'n[]': '1' });
    } finally {
      await fastify.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
