import { MigrationInterface, QueryRunner } from 'typeorm';

export class GuildStateRestart1796000000000 implements MigrationInterface {
  name = 'GuildStateRestart1796000000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // A shard's replaced stream and snapshot (docs/guild-state.md, "A restart"; takeovers).
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "stream_reported_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "previous_stream_id" character varying(64)`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "previous_stream_reported_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "stream_replaced_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" ADD "previous_snapshot_at" TIMESTAMP WITH TIME ZONE`,
    );
    // Each state's JSON length, so that a batch reads held states by bytes (docs/guild-state.md).
    await queryRunner.query(
      `ALTER TABLE "bot_guild_states" ADD "bytes" integer NOT NULL DEFAULT 0`,
    );
    await queryRunner.query(`UPDATE "bot_guild_states" SET "bytes" = length("state"::text)`);
    await queryRunner.query(`ALTER TABLE "bot_guild_states" ALTER COLUMN "bytes" DROP DEFAULT`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "bot_guild_states" DROP COLUMN "bytes"`);
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "previous_snapshot_at"`);
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "stream_replaced_at"`);
    await queryRunner.query(
      `ALTER TABLE "bot_guild_shards" DROP COLUMN "previous_stream_reported_at"`,
    );
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "previous_stream_id"`);
    await queryRunner.query(`ALTER TABLE "bot_guild_shards" DROP COLUMN "stream_reported_at"`);
  }
}
