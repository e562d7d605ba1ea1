import { MigrationInterface, QueryRunner } from 'typeorm';

export class Settings1795300692853 implements MigrationInterface {
  name = 'Settings1795300692853';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "command_configs" ("guild_id" character varying(20) NOT NULL, "command" character varying(32) NOT NULL, "enabled" boolean NOT NULL, "allowed_roles" jsonb NOT NULL, "disabled_channels" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_by" character varying(20) NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_by" character varying(20) NOT NULL, CONSTRAINT "PK_84b511dc0d8ce86a4f90e2c56e7" PRIMARY KEY ("guild_id", "command"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "auditlog_sinks" ("guild_id" character varying(20) NOT NULL, "id" uuid NOT NULL, "channel" character varying(20) NOT NULL, "events" jsonb NOT NULL, "enabled" boolean NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_by" character varying(20) NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_by" character varying(20) NOT NULL, CONSTRAINT "PK_b5ae8d459fac4bd45e0cef00ba2" PRIMARY KEY ("guild_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "lockdown_settings" ("guild_id" character varying(20) NOT NULL, "id" character varying(16) NOT NULL, "member_roles" jsonb NOT NULL, "require_correct_layout" boolean NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_by" character varying(20) NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_by" character varying(20) NOT NULL, CONSTRAINT "PK_4bf6323392741897b1016d097f9" PRIMARY KEY ("guild_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "protection" ("guild_id" character varying(20) NOT NULL, "id" character varying(16) NOT NULL, "minimum_account_age" character varying(10), "max_mentions" integer, "hoist_detection" integer NOT NULL, "fake_bot_detection" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_by" character varying(20) NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_by" character varying(20) NOT NULL, CONSTRAINT "PK_92286e638c82ef9f0d137336a34" PRIMARY KEY ("guild_id", "id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "guild_members" ("guild_id" character varying(20) NOT NULL, "user_id" character varying(20) NOT NULL, "perm_overrides" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_by" character varying(20) NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_by" character varying(20) NOT NULL, CONSTRAINT "PK_a083ac21e0471c1235b0325cc70" PRIMARY KEY ("guild_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "guild_roles" ("guild_id" character varying(20) NOT NULL, "role_id" character varying(20) NOT NULL, "perms" jsonb NOT NULL, "index" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_by" character varying(20) NOT NULL, "last_updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_updated_by" character varying(20) NOT NULL, CONSTRAINT "PK_86a938727fe9f3a85b22074e615" PRIMARY KEY ("guild_id", "role_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "settings_audit_log" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "guild_id" character varying(20) NOT NULL, "setting" character varying(64) NOT NULL, "operation" character varying(16) NOT NULL, "user_id" character varying(20) NOT NULL, "before" jsonb, "after" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_9efb8642c000a3a133e94447e76" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "settings_audit_log_guild_created_idx" ON "settings_audit_log"  ("guild_id", "created_at") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."settings_audit_log_guild_created_idx"`);
    await queryRunner.query(`DROP TABLE "settings_audit_log"`);
    await queryRunner.query(`DROP TABLE "guild_roles"`);
    await queryRunner.query(`DROP TABLE "guild_members"`);
    await queryRunner.query(`DROP TABLE "protection"`);
    await queryRunner.query(`DROP TABLE "lockdown_settings"`);
    await queryRunner.query(`DROP TABLE "auditlog_sinks"`);
    await queryRunner.query(`DROP TABLE "command_configs"`);
  }
}
