import { MigrationInterface, QueryRunner } from 'typeorm';

export class ModerationCases1795946078315 implements MigrationInterface {
  name = 'ModerationCases1795946078315';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "moderation_cases" ("guild_id" character varying(20) NOT NULL, "number" integer NOT NULL, "user_id" character varying(20) NOT NULL, "moderator_id" character varying(20) NOT NULL, "action" character varying(16) NOT NULL, "reason" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "moderation_cases_action_check" CHECK ("action" IN ('note', 'warn', 'mute', 'unmute', 'kick', 'ban', 'unban')), CONSTRAINT "PK_ddbf85d5465d1a98d9c08aec5d4" PRIMARY KEY ("guild_id", "number"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "moderation_cases_user_idx" ON "moderation_cases"  ("guild_id", "user_id", "number") `,
    );
    await queryRunner.query(
      `CREATE TABLE "moderation_case_counters" ("guild_id" character varying(20) NOT NULL, "last_number" integer NOT NULL, CONSTRAINT "PK_a0ee964473bd901830febeb66b4" PRIMARY KEY ("guild_id"))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "moderation_case_counters"`);
    await queryRunner.query(`DROP INDEX "public"."moderation_cases_user_idx"`);
    await queryRunner.query(`DROP TABLE "moderation_cases"`);
  }
}
