import {
  REVISION_OPERATIONS,
  type RevisionOperation,
  type SettingsRevisionEntity,
} from 'src/settings/engine/settings-revision.entity';
import type { SessionType } from 'src/common/auth/authenticated-session';

export { REVISION_OPERATIONS, type RevisionOperation };

/**
 * What an event stream tells of one revision: which entry of which setting changed, how, by whom,
 * and which columns. Values stay out: a client that needs them reads the entry (or the revision,
 * with `settings_history.view`).
 */
export interface RevisionSummary {
  revision: number;
  setting: string;
  key: Record<string, unknown> | null;
  operation: RevisionOperation;
  user_id: string;
  session_type: SessionType | null;
  /** The columns whose value changed. */
  changed: string[];
  reverts: number | null;
  created_at: string;
}

export function summariseRevision(revision: SettingsRevisionEntity): RevisionSummary {
  return {
    revision: revision.revision,
    setting: revision.setting,
    key: revision.key,
    operation: revision.operation,
    user_id: revision.user_id,
    session_type: revision.session_type,
    changed: Object.keys(revision.diff ?? {}),
    reverts: revision.reverts,
    created_at: revision.created_at.toISOString(),
  };
}

/** A change to a guild's settings committed on this instance: its revisions, in order. */
export class SettingsChangedEvent {
  static readonly event = 'settings.changed';

  constructor(
    readonly guildId: string,
    readonly revisions: readonly RevisionSummary[],
  ) {}
}
