import { MigrationInterface, QueryRunner } from 'typeorm';

/** The largest id PostgreSQL's signed `bigint` holds: the platform's ids go up to 2^64-1. */
const MAX_BIGINT = '9223372036854775807';

export class UnsignedUserIds1796624477000 implements MigrationInterface {
  name = 'UnsignedUserIds1796624477000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // User ids are unsigned 64-bit snowflakes; `bigint` is signed and refused ids from 2^63 on.
    // Both sides of the foreign key change together: bigint and numeric do not compare by one
    // index operator family, so PostgreSQL cannot keep the constraint across the change.
    await queryRunner.query(
      `ALTER TABLE "sessions" DROP CONSTRAINT "FK_085d540d9f418cfbdc7bd55bb19"`,
    );
    await queryRunner.query(
      `ALTER TABLE "users" ALTER COLUMN "id" TYPE numeric(20,0) USING "id"::numeric(20,0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ALTER COLUMN "user_id" TYPE numeric(20,0) USING "user_id"::numeric(20,0)`,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "FK_085d540d9f418cfbdc7bd55bb19" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    const [{ above }] = (await queryRunner.query(
      `SELECT count(*)::int AS above FROM "users" WHERE "id" > ${MAX_BIGINT}`,
    )) as { above: number }[];
    if (above > 0) {
      throw new Error(
        `${above} user id(s) exceed ${MAX_BIGINT}, which bigint cannot hold: delete those users first`,
      );
    }
    await queryRunner.query(
      `ALTER TABLE "sessions" DROP CONSTRAINT "FK_085d540d9f418cfbdc7bd55bb19"`,
    );
    await queryRunner.query(
      `ALTER TABLE "sessions" ALTER COLUMN "user_id" TYPE bigint USING "user_id"::bigint`,
    );
    await queryRunner.query(`ALTER TABLE "users" ALTER COLUMN "id" TYPE bigint USING "id"::bigint`);
    await queryRunner.query(
      `ALTER TABLE "sessions" ADD CONSTRAINT "FK_085d540d9f418cfbdc7bd55bb19" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }
}
