import { MigrationInterface, QueryRunner } from 'typeorm';

export class ScopedTokens1795489178451 implements MigrationInterface {
  name = 'ScopedTokens1795489178451';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" ADD "scope_guilds" text array`);
    await queryRunner.query(`ALTER TABLE "sessions" ADD "scope_permissions" text array`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "scope_permissions"`);
    await queryRunner.query(`ALTER TABLE "sessions" DROP COLUMN "scope_guilds"`);
  }
}
