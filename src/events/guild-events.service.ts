import { Injectable, Logger, type MessageEvent, type OnModuleInit } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { Observable } from 'rxjs';
import type { AuthenticatedSession } from 'src/common/auth/authenticated-session';
import { AppException } from 'src/common/errors/app.exception';
import { EventBus, type BusMessage } from 'src/events/event-bus';
import {
  EventStreams,
  RECONNECT_DELAY_MS,
  type OpenStream,
  type StreamSocket,
} from 'src/events/event-streams';
import { RevisionFeed, type SettingViewTest } from 'src/settings/revisions/revision-feed.service';
import { SettingsChangedEvent, type RevisionSummary } from 'src/settings/engine/settings.events';

/**
 * How many revisions a resumed stream replays at most; a client further behind is told to read
 * the settings again (a `reset` event) instead.
 */
export const GUILD_CATCH_UP_LIMIT = 1_000;

/**
 * How far back a resumed stream replays: a reconnect comes within seconds; a client away for longer
 * reads the settings again (`reset`), and the trail itself is read with `settings_history.view`.
 */
export const GUILD_RESUME_WINDOW_MS = 10 * 60_000;

/**
 * A change of more revisions than this (an import, a restore) reaches a stream as one `reset`
 * event, not one event per entry: the client reads the settings again.
 */
export const MAX_REVISIONS_PER_CHANGE = 50;

/** Revisions a resumed stream reads and sends at once; the next part waits for the socket. */
const CATCH_UP_PAGE = 100;

/** What a caller may view in the guild as of one change, resolved once per caller. */
type ViewsOf = (session: AuthenticatedSession) => Promise<SettingViewTest>;

/** One stream following a guild's settings changes, handled in order, one step at a time. */
class GuildFollower {
  private lastSent = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly stream: OpenStream,
    private readonly guildId: string,
    private readonly session: AuthenticatedSession,
    private readonly feed: RevisionFeed,
    private readonly logger: Logger,
  ) {}

  /** Opens with a `ready` event, or, resuming after `lastEventId`, with what the client missed. */
  begin(lastEventId: number | null): void {
    this.enqueue(async () => {
      const latest = await this.feed.latest(this.guildId);
      if (lastEventId === null) {
        this.lastSent = latest;
        this.stream.send({
          type: 'ready',
          id: String(latest),
          retry: RECONNECT_DELAY_MS,
          data: { guild_id: this.guildId, revision: latest },
        });
        return;
      }
      if (lastEventId > latest) {
        this.reset(latest);
        return;
      }
      this.lastSent = lastEventId;
      await this.catchUp(latest, Date.now() - GUILD_RESUME_WINDOW_MS);
    });
  }

  /**
   * Revisions committed on some instance (in order); a gap before them is read from the trail.
   * `views` answers for the caller as of this change (shared by the streams of one caller).
   */
  receive(revisions: readonly RevisionSummary[], views: ViewsOf): void {
    this.enqueue(async () => {
      const fresh = revisions.filter((revision) => revision.revision > this.lastSent);
      if (fresh.length === 0) return;
      if (fresh.length > MAX_REVISIONS_PER_CHANGE) {
        this.reset(fresh[fresh.length - 1].revision);
        return;
      }
      if (fresh[0].revision > this.lastSent + 1) await this.catchUp(fresh[0].revision - 1);
      await this.deliver(
        fresh.filter((revision) => revision.revision > this.lastSent),
        () => views(this.session),
      );
    });
  }

  /** Messages may have been lost: sends what the trail holds after the last sent. */
  resync(): void {
    this.enqueue(async () => {
      const latest = await this.feed.latest(this.guildId);
      if (latest > this.lastSent) await this.catchUp(latest);
    });
  }

  /**
   * Sends the revisions after the last sent, up to `until`; a `reset` instead if they are too many,
   * or if the first was committed before `notBefore` (a client away for longer than the window).
   * They are read and sent a page at a time, the next page once the socket has taken the last.
   */
  private async catchUp(until: number, notBefore = 0): Promise<void> {
    if (until - this.lastSent > GUILD_CATCH_UP_LIMIT) {
      this.reset(until);
      return;
    }
    let first = true;
    while (this.lastSent < until && this.stream.isOpen) {
      const page = await this.feed.after(
        this.guildId,
        this.lastSent,
        Math.min(CATCH_UP_PAGE, until - this.lastSent),
      );
      if (page.length === 0) return;
      if (first && Date.parse(page[0].created_at) < notBefore) {
        this.reset(until);
        return;
      }
      first = false;
      await this.deliver(page);
      await this.stream.drained();
    }
  }

  /** Each revision of a setting the caller may view now; the others are skipped. */
  private async deliver(
    revisions: readonly RevisionSummary[],
    viewer: () => Promise<SettingViewTest> = () => this.feed.viewer(this.guildId, this.session),
  ): Promise<void> {
    if (revisions.length === 0) return;
    const views = await viewer();
    let skipped = false;
    for (const revision of revisions) {
      this.lastSent = revision.revision;
      skipped = !views(revision.setting);
      if (skipped) continue;
      this.stream.send({
        type: 'settings',
        id: String(revision.revision),
        data: this.feed.forClients(revision),
      });
    }
    // An id alone moves the client's Last-Event-ID past revisions it may not see (no event is
    // dispatched): a reconnect then resumes from here, not from before them.
    if (skipped) this.stream.send({ id: String(this.lastSent) });
  }

  /** The client missed more than can be replayed: it reads the settings again. */
  private reset(latest: number): void {
    this.lastSent = latest;
    this.stream.send({
      type: 'reset',
      id: String(latest),
      retry: RECONNECT_DELAY_MS,
      data: { guild_id: this.guildId, revision: latest },
    });
  }

  private enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (!this.stream.isOpen) return;
      try {
        await step();
      } catch (error) {
        // Refused now (the caller left the guild, the bot was removed): the stream ends, and a
        // reconnect is answered with the reason. A failure ends it too; the client resumes.
        if (!(error instanceof AppException)) {
          this.logger.warn({ reason: (error as Error).message }, 'A guild event stream failed');
        }
        this.stream.end();
      }
    });
  }
}

/**
 * Guild event streams: each committed settings change is published to every instance, and each
 * stream following the guild sends the revisions of the settings its caller may view, checked
 * per event. A stream resumes from `Last-Event-ID` (a revision number) without a gap, read from the
 * revisions.
 */
@Injectable()
export class GuildEventsService implements OnModuleInit {
  private readonly logger = new Logger(GuildEventsService.name);
  private readonly followers = new Map<string, Set<GuildFollower>>();

  constructor(
    private readonly bus: EventBus,
    private readonly feed: RevisionFeed,
    private readonly streams: EventStreams,
  ) {}

  onModuleInit(): void {
    this.bus.subscribe((message) => this.dispatch(message));
  }

  @OnEvent(SettingsChangedEvent.event)
  onSettingsChanged({ guildId, revisions }: SettingsChangedEvent): void {
    void this.bus.publish({ kind: 'settings', guildId, revisions: [...revisions] });
  }

  /** 404 or 403 as for the settings, 429 past a stream limit; else the stream's events. */
  async follow(
    guildId: string,
    session: AuthenticatedSession,
    token: string,
    lastEventId: number | null,
    signal: AbortSignal,
    socket: StreamSocket | null,
  ): Promise<Observable<MessageEvent>> {
    await this.feed.requireFollower(guildId, session);
    const stream = this.streams.start(
      'guild',
      { kind: 'session', sessionId: session.id, userId: session.userId, token },
      signal,
      socket,
    );
    const follower = new GuildFollower(stream, guildId, session, this.feed, this.logger);
    let followers = this.followers.get(guildId);
    if (!followers) this.followers.set(guildId, (followers = new Set()));
    followers.add(follower);
    stream.onEnd(() => {
      followers.delete(follower);
      if (followers.size === 0 && this.followers.get(guildId) === followers) {
        this.followers.delete(guildId);
      }
    });
    follower.begin(lastEventId);
    return stream.events;
  }

  private dispatch(message: BusMessage): void {
    if (message.kind === 'resync') {
      for (const followers of this.followers.values()) {
        for (const follower of followers) follower.resync();
      }
      return;
    }
    if (message.kind !== 'settings') return;
    const followers = this.followers.get(message.guildId);
    if (!followers) return;
    // What each caller may view, resolved once per change however many streams the caller holds
    // (a dashboard open in several tabs): the same answer each stream would get on its own.
    const resolved = new Map<string, Promise<SettingViewTest>>();
    const views: ViewsOf = (session) => {
      const key = `${session.userId}:${JSON.stringify(session.scope)}`;
      let test = resolved.get(key);
      if (!test) {
        test = this.feed.viewer(message.guildId, session);
        // A refusal is each stream's own to handle; the shared promise must not go unhandled.
        test.catch(() => undefined);
        resolved.set(key, test);
      }
      return test;
    };
    for (const follower of followers) follower.receive(message.revisions, views);
  }
}
