import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';

/**
 * The advisory-lock key of one guild's settings: the first 64 bits of SHA-256 of
 * `settings:<guild id>`, as PostgreSQL's signed bigint (a decimal string, so no precision is lost).
 */
export function settingsLockKey(guildId: string): string {
  return createHash('sha256').update(`settings:${guildId}`).digest().readBigInt64BE(0).toString();
}

/**
 * Serialises the settings writes of one guild until the transaction ends (commit or rollback).
 * Works on PostgreSQL and PGlite; taken first in the transaction, one per guild, so it cannot
 * deadlock with another settings write.
 */
export async function lockGuildSettings(manager: EntityManager, guildId: string): Promise<void> {
  await manager.query('SELECT pg_advisory_xact_lock($1::bigint)', [settingsLockKey(guildId)]);
}
