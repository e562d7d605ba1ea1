import { MigrationInterface, QueryRunner } from 'typeorm';

export class UsersAndSessions1795293813117 implements MigrationInterface {
  name = 'UsersAndSessions1795293813117';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "users" ("id" bigint NOT NULL, "state" character varying(16) NOT NULL DEFAULT 'normal', "username" character varying(64) NOT NULL, "global_name" character varying(64), "avatar" character varying(64), "grant_access_token" bytea, "grant_refresh_token" bytea, "grant_expires_at" TIMESTAMP WITH TIME ZONE, "grant_scopes" character varying(512), "grant_state" character varying(16) NOT NULL DEFAULT 'active', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "users_grant_state_check" CHECK ("grant_state" IN ('active', 'dead')), CONSTRAINT "users_state_check" CHECK ("state" IN ('normal', 'banned')), CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "sessions" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "user_id" bigint NOT NULL, "type" character varying(16) NOT NULL, "name" character varying(64), "state" character varying(16) NOT NULL DEFAULT 'active', "token_hash" bytea NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_used_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "sessions_state_check" CHECK ("state" IN ('active', 'banned')), CONSTRAINT "sessions_type_check" CHECK ("type" IN ('login', 'api')), CONSTRAINT "PK_3238ef96f18b355b671619111bc" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"  ("token_hash") `,
    );
    await queryRunner.query(
      `CREATE INDEX "sessions_expires_at_idx" ON "sessions"  ("expires_at") `,
    );
    await queryRunner.query(
      `CREATE INDEX "sessions_user_created_idx" ON "sessions"  ("user_id", "created_at") `,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "FK_085d540d9f418cfbdc7bd55bb19" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "sessions" DROP CONSTRAINT "FK_085d540d9f418cfbdc7bd55bb19"`,
    );
    await queryRunner.query(`DROP INDEX "public"."sessions_user_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_expires_at_idx"`);
    await queryRunner.query(`DROP INDEX "public"."sessions_token_hash_key"`);
    await queryRunner.query(`DROP TABLE "sessions"`);
    await queryRunner.query(`DROP TABLE "users"`);
  }
}
