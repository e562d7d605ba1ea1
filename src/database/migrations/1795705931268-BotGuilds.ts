import { MigrationInterface, QueryRunner } from 'typeorm';

export class BotGuilds1795705931268 implements MigrationInterface {
  name = 'BotGuilds1795705931268';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // Every write to the membership feed takes its version from here (docs/bot-membership.md).
    await queryRunner.query(`CREATE SEQUENCE "bot_membership_version"`);
    await queryRunner.query(
      `CREATE TABLE "bot_guild_shards" ("shard_id" integer NOT NULL, "shard_count" integer, "snapshot_at" TIMESTAMP WITH TIME ZONE, "reported_at" TIMESTAMP WITH TIME ZONE NOT NULL, "version" bigint NOT NULL, CONSTRAINT "PK_1e07e0c85af975665d4ab7833e3" PRIMARY KEY ("shard_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "bot_guild_shards_version_idx" ON "bot_guild_shards"  ("version") `,
    );
    await queryRunner.query(
      `CREATE TABLE "bot_guilds" ("guild_id" character varying(20) NOT NULL, "shard_id" integer NOT NULL, "present" boolean NOT NULL, "changed_at" TIMESTAMP WITH TIME ZONE NOT NULL, "snapshot_at" TIMESTAMP WITH TIME ZONE, "version" bigint NOT NULL, CONSTRAINT "PK_c82c5a2b550859005a49a8b6b76" PRIMARY KEY ("guild_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "bot_guilds_shard_idx" ON "bot_guilds"  ("shard_id", "snapshot_at") `,
    );
    await queryRunner.query(`CREATE INDEX "bot_guilds_version_idx" ON "bot_guilds"  ("version") `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."bot_guilds_version_idx"`);
    await queryRunner.query(`DROP INDEX "public"."bot_guilds_shard_idx"`);
    await queryRunner.query(`DROP TABLE "bot_guilds"`);
    await queryRunner.query(`DROP INDEX "public"."bot_guild_shards_version_idx"`);
    await queryRunner.query(`DROP TABLE "bot_guild_shards"`);
    await queryRunner.query(`DROP SEQUENCE "bot_membership_version"`);
  }
}
