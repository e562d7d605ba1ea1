import { ParseIntegerPipe } from 'src/common/validation/integer-text';

/** The platform caps shard counts far below this; anything else in the path is a client error. */
export const MAX_SHARD_ID = 65_535;

/** `shard_id`: a whole number from 0 to MAX_SHARD_ID. */
export const ParseShardIdPipe = new ParseIntegerPipe('shard_id', 0, MAX_SHARD_ID);
