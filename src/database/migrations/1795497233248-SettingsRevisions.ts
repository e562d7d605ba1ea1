import { MigrationInterface, QueryRunner } from 'typeorm';

export class SettingsRevisions1795497233248 implements MigrationInterface {
  name = 'SettingsRevisions1795497233248';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "settings_revisions" ("guild_id" character varying(20) NOT NULL, "revision" integer NOT NULL, "setting" character varying(64) NOT NULL, "key" jsonb, "operation" character varying(16) NOT NULL, "before" jsonb, "after" jsonb, "diff" jsonb, "user_id" character varying(20) NOT NULL, "session_id" uuid, "session_type" character varying(8), "reverts" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_fd73e4758417e7a7a7ebb151f6f" PRIMARY KEY ("guild_id", "revision"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "settings_revisions_created_idx" ON "settings_revisions"  ("guild_id", "created_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "settings_revisions_key_idx" ON "settings_revisions"  ("guild_id", "setting", "key") `,
    );
    await queryRunner.query(
      `CREATE INDEX "settings_revisions_author_idx" ON "settings_revisions"  ("guild_id", "user_id", "revision") `,
    );
    await queryRunner.query(
      `CREATE INDEX "settings_revisions_setting_idx" ON "settings_revisions"  ("guild_id", "setting", "revision") `,
    );
    // The audit log's records become the first revisions of their guild, in the order they were
    // made; a Reorder record (arrays of entries) becomes one revision per entry, as Reorders are
    // recorded from now on. They name no entry (key), diff or session: the log did not keep them.
    await queryRunner.query(
      `INSERT INTO "settings_revisions" ("guild_id", "revision", "setting", "operation", "before", "after", "user_id", "created_at") ` +
        `SELECT "guild_id", row_number() OVER (PARTITION BY "guild_id" ORDER BY "created_at", "id", "part"), "setting", "operation", "before", "after", "user_id", "created_at" FROM (` +
        `SELECT "id", 0 AS "part", "guild_id", "setting", "operation", "before", "after", "user_id", "created_at" FROM "settings_audit_log" WHERE jsonb_typeof(COALESCE("before", "after")) IS DISTINCT FROM 'array' ` +
        `UNION ALL SELECT "log"."id", "entry"."part", "log"."guild_id", "log"."setting", "log"."operation", "entry"."value", "log"."after" -> ("entry"."part"::int - 1), "log"."user_id", "log"."created_at" ` +
        `FROM "settings_audit_log" AS "log", jsonb_array_elements("log"."before") WITH ORDINALITY AS "entry"("value", "part") WHERE jsonb_typeof("log"."before") = 'array') AS "entries"`,
    );
    await queryRunner.query(`DROP INDEX "public"."settings_audit_log_guild_created_idx"`);
    await queryRunner.query(`DROP TABLE "settings_audit_log"`);
    await queryRunner.query(
      `ALTER TABLE "command_configs" ADD "version" integer NOT NULL DEFAULT '1'`,
    );
    await queryRunner.query(
      `ALTER TABLE "guild_members" ADD "version" integer NOT NULL DEFAULT '1'`,
    );
    await queryRunner.query(`ALTER TABLE "guild_roles" ADD "version" integer NOT NULL DEFAULT '1'`);
    await queryRunner.query(
      `ALTER TABLE "lockdown_settings" ADD "version" integer NOT NULL DEFAULT '1'`,
    );
    await queryRunner.query(
      `ALTER TABLE "auditlog_sinks" ADD "version" integer NOT NULL DEFAULT '1'`,
    );
    await queryRunner.query(`ALTER TABLE "protection" ADD "version" integer NOT NULL DEFAULT '1'`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "protection" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "auditlog_sinks" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "lockdown_settings" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "guild_roles" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "guild_members" DROP COLUMN "version"`);
    await queryRunner.query(`ALTER TABLE "command_configs" DROP COLUMN "version"`);
    await queryRunner.query(
      `CREATE TABLE "settings_audit_log" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "guild_id" character varying(20) NOT NULL, "setting" character varying(64) NOT NULL, "operation" character varying(16) NOT NULL, "user_id" character varying(20) NOT NULL, "before" jsonb, "after" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_9efb8642c000a3a133e94447e76" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "settings_audit_log_guild_created_idx" ON "settings_audit_log"  ("guild_id", "created_at") `,
    );
    await queryRunner.query(
      `INSERT INTO "settings_audit_log" ("guild_id", "setting", "operation", "user_id", "before", "after", "created_at") SELECT "guild_id", "setting", "operation", "user_id", "before", "after", "created_at" FROM "settings_revisions"`,
    );
    await queryRunner.query(`DROP INDEX "public"."settings_revisions_setting_idx"`);
    await queryRunner.query(`DROP INDEX "public"."settings_revisions_author_idx"`);
    await queryRunner.query(`DROP INDEX "public"."settings_revisions_key_idx"`);
    await queryRunner.query(`DROP INDEX "public"."settings_revisions_created_idx"`);
    await queryRunner.query(`DROP TABLE "settings_revisions"`);
  }
}
