import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageRequest } from 'src/common/paging/page';
import {
  type CaseAction,
  ModerationCaseCounterEntity,
  ModerationCaseEntity,
} from 'src/cases/moderation-case.entity';

/** A case as the bot reports it; the number and the time are given when it is stored. */
export interface NewCase {
  guildId: string;
  userId: string;
  moderatorId: string;
  action: CaseAction;
  reason: string | null;
}

/** Which of a guild's cases a page holds: newest first, older than `before` when set. */
export interface CasePageQuery extends PageRequest {
  guildId: string;
  userId?: string;
}

/** The guild's moderation cases; every read and write names its guild. */
@Injectable()
export class CasesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Stores a case under the guild's next number, in one transaction: the counter row's lock
   * orders concurrent cases of one guild, so no two get a number and none is skipped.
   */
  record(newCase: NewCase): Promise<ModerationCaseEntity> {
    return this.dataSource.transaction(async (manager) => {
      const [counted] = await manager.query<[{ last_number: number }]>(
        `INSERT INTO "moderation_case_counters" ("guild_id", "last_number") VALUES ($1, 1)
         ON CONFLICT ("guild_id") DO UPDATE SET "last_number" = "moderation_case_counters"."last_number" + 1
         RETURNING "last_number"`,
        [newCase.guildId],
      );
      const number = counted.last_number;
      return manager.save(manager.create(ModerationCaseEntity, { ...newCase, number }));
    });
  }

  /** A page of the guild's cases, newest first (see CasePageQuery). */
  findPage({ guildId, userId, before, take }: CasePageQuery): Promise<ModerationCaseEntity[]> {
    const query = this.dataSource
      .getRepository(ModerationCaseEntity)
      .createQueryBuilder('c')
      .where('c.guild_id = :guildId', { guildId })
      .orderBy('c.number', 'DESC')
      .take(take);
    if (userId !== undefined) query.andWhere('c.user_id = :userId', { userId });
    if (before !== undefined) query.andWhere('c.number < :before', { before });
    return query.getMany();
  }
}

/** The entities of this module, for TypeOrmModule.forFeature. */
export const CASE_ENTITIES = [ModerationCaseEntity, ModerationCaseCounterEntity];
