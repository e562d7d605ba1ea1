import { MigrationInterface, QueryRunner } from 'typeorm';

export class ShardStatus1795298878197 implements MigrationInterface {
  name = 'ShardStatus1795298878197';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "shard_status" ("shard_id" integer NOT NULL, "status" character varying(16) NOT NULL, "latency_ms" integer, "guilds" bigint NOT NULL, "users" bigint NOT NULL, "uptime_s" bigint NOT NULL, "total_uptime_s" bigint NOT NULL, "reported_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "shard_status_status_check" CHECK ("status" IN ('Idle', 'Connecting', 'Connected', 'Ready', 'Reconnecting', 'Closing', 'Closed', 'Erroring', 'Unknown')), CONSTRAINT "PK_0d3fff6a71f0a7019f0ca5e02f7" PRIMARY KEY ("shard_id"))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "shard_status"`);
  }
}
