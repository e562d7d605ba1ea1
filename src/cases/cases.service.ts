import { Injectable } from '@nestjs/common';
import { CasesRepository } from 'src/cases/cases.repository';
import { fetchPage } from 'src/common/paging/page';
import {
  type CaseDto,
  type CasePageDto,
  DEFAULT_CASES_PAGE,
  type ListCasesQueryDto,
  type RecordCaseDto,
} from 'src/cases/dto/cases.dto';
import type { ModerationCaseEntity } from 'src/cases/moderation-case.entity';

/** Moderation cases: the bot records them, members with `cases.view` read them (docs/api.md). */
@Injectable()
export class CasesService {
  constructor(private readonly cases: CasesRepository) {}

  async record(guildId: string, body: RecordCaseDto): Promise<CaseDto> {
    const stored = await this.cases.record({
      guildId,
      userId: body.user_id,
      moderatorId: body.moderator_id,
      action: body.action,
      reason: body.reason ?? null,
    });
    return toDto(stored);
  }

  async list(guildId: string, query: ListCasesQueryDto): Promise<CasePageDto> {
    const page = await fetchPage(
      query,
      DEFAULT_CASES_PAGE,
      (request) => this.cases.findPage({ guildId, userId: query.user_id, ...request }),
      (row) => row.number,
    );
    return { cases: page.rows.map(toDto), next_cursor: page.nextCursor };
  }
}

function toDto(row: ModerationCaseEntity): CaseDto {
  return {
    number: row.number,
    guild_id: row.guildId,
    user_id: row.userId,
    moderator_id: row.moderatorId,
    action: row.action,
    reason: row.reason,
    created_at: row.createdAt.toISOString(),
  };
}
