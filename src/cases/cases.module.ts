import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CasesController } from 'src/cases/cases.controller';
import { CASE_ENTITIES, CasesRepository } from 'src/cases/cases.repository';
import { CasesService } from 'src/cases/cases.service';
import { Feature } from 'src/common/feature/feature.decorator';
import { PermissionsModule } from 'src/permissions/permissions.module';

/**
 * Moderation cases, as moderation bots' logs keep them: the bot records each action it or a
 * moderator takes (`POST`, API tokens of ROOT_USERS), and members holding `cases.view` read a
 * guild's cases (`GET`). docs/api.md, "Moderation cases".
 */
@Feature({
  tags: { cases: "A guild's moderation cases: the bot records them, moderators read them" },
})
@Module({
  imports: [TypeOrmModule.forFeature(CASE_ENTITIES), PermissionsModule],
  controllers: [CasesController],
  providers: [CasesService, CasesRepository],
})
export class CasesModule {}
