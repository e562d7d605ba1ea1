import { Injectable, type PipeTransform } from '@nestjs/common';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';

/** The platform caps shard counts far below this; anything else in the path is a client error. */
export const MAX_SHARD_ID = 65_535;

@Injectable()
export class ParseShardIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    if (typeof value === 'string' && /^(0|[1-9]\d{0,4})$/.test(value)) {
      const id = Number(value);
      if (id <= MAX_SHARD_ID) return id;
    }
    const message = `shard_id must be a whole number from 0 to ${MAX_SHARD_ID}`;
    throw new AppException(ErrorCode.BadRequest, message, [{ field: 'shard_id', message }]);
  }
}
