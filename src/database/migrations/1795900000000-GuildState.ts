import { MigrationInterface, QueryRunner } from 'typeorm';

export class GuildState1795900000000 implements MigrationInterface {
  name = 'GuildState1795900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // The guild-state feed (docs/guild-state.md): a row per guild, and each shard's report stream.
    await queryRunner.query(
      `CREATE TABLE "bot_guild_states" ("guild_id" character varying(20) NOT NULL, "shard_id" integer NOT NULL, "stream_id" character varying(64) NOT NULL, "state" jsonb NOT NULL, "deleted_ids" jsonb NOT NULL, "hash" character varying(64) NOT NULL, "drifted" boolean NOT NULL, "unavailable" boolean NOT NULL, "reported_at" TIMESTAMP WITH TIME ZONE NOT NULL, "version" bigint NOT NULL, CONSTRAINT "PK_bot_guild_states" PRIMARY KEY ("guild_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "bot_guild_states_version_idx" ON "bot_guild_states" ("version") `,
    );
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" ADD "stream_id" character varying(64)`);
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "stream_started_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "stream_seq" bigint NOT NULL DEFAULT '0'`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "stream_gap" boolean NOT NULL DEFAULT false`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "stream_gap"`);
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "stream_seq"`);
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "stream_started_at"`);
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "stream_id"`);
    await queryRunner.query(`DROP INDEX "public"."bot_guild_states_version_idx"`);
    await queryRunner.query(`DROP TABLE "bot_guild_states"`);
  }
}
