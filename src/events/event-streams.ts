import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type MessageEvent,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { Observable, type Subscriber } from 'rxjs';
import { Metrics } from 'src/common/metrics/metrics';
import { AppException } from 'src/common/errors/app.exception';
import { ErrorCode } from 'src/common/errors/error-code';
import { rateLimitSubject } from 'src/common/net/rate-limit-subject';
import { AppConfig, type EventsConfig } from 'src/config/app-config';
import { SessionsService } from 'src/sessions/sessions.service';
import { SessionsInvalidatedEvent } from 'src/sessions/sessions.events';

export type StreamKind = 'guild' | 'bot';

/** Who holds a stream open: a session (token kept to check it again), or an anonymous address. */
export type StreamOwner =
  | { kind: 'session'; sessionId: string; userId: string; token: string }
  | { kind: 'anonymous'; address: string };

/**
 * The anonymous owner of a stream from `ip`: an IPv6 client counts as its /48 (a site, which one
 * customer often holds whole), wider than the /64 of rate limits, as an open stream is held, not
 * spent.
 */
export function anonymousOwner(ip: string): StreamOwner {
  return { kind: 'anonymous', address: rateLimitSubject(ip, 48) };
}

/**
 * The most a stream holds for a client that does not read: the bytes its socket has not sent yet
 * plus the events waiting here for the socket to drain. Past it the stream ends (the client
 * reconnects and resumes from its last event).
 */
export const MAX_BUFFERED_BYTES = 256 * 1024;

/** The part of a stream's socket it watches: what is not sent yet, and when it drains. */
export interface StreamSocket {
  readonly writableLength: number;
  readonly writableNeedDrain: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
}

/** How long a client waits before reconnecting after a stream ends (the SSE `retry` field). */
export const RECONNECT_DELAY_MS = 3_000;

/** Events a stream holds before Nest subscribes to it (its opening ones, or a resume's replay). */
const MAX_PENDING_BEFORE_SUBSCRIBED = 2_000;

/** Sessions checked again at once at each heartbeat. */
const SESSION_CHECKS_AT_ONCE = 4;

/**
 * One open stream: what it sends, and how it ends. Events sent before Nest subscribes (the opening
 * ones) wait for it; Nest unsubscribing (the client left) ends the stream.
 */
export class OpenStream {
  private subscriber: Subscriber<MessageEvent> | null = null;
  private readonly pending: MessageEvent[] = [];
  private readonly endListeners: (() => void)[] = [];
  private ended = false;
  /** Events waiting for the socket to drain, and their size. */
  private readonly held: { event: MessageEvent; bytes: number }[] = [];
  private heldBytes = 0;
  private waitingForDrain = false;
  private readonly drainWaiters: (() => void)[] = [];
  /** Ended for holding more than MAX_BUFFERED_BYTES for a client that does not read. */
  overflowed = false;

  readonly events = new Observable<MessageEvent>((subscriber) => {
    this.subscriber = subscriber;
    for (const event of this.pending.splice(0)) subscriber.next(event);
    if (this.ended) subscriber.complete();
    return () => this.end();
  });

  constructor(
    readonly kind: StreamKind,
    readonly owner: StreamOwner,
    private readonly socket: StreamSocket | null = null,
  ) {}

  get isOpen(): boolean {
    return !this.ended;
  }

  /**
   * Sends an event: at once while the socket takes data, else held until it drains. A client
   * that does not read ends its stream once the socket's unsent bytes and the held events pass
   * MAX_BUFFERED_BYTES: the budget is what the response really holds, checked on every event.
   */
  send(event: MessageEvent): void {
    if (this.ended) return;
    if (!this.subscriber) {
      if (this.pending.length < MAX_PENDING_BEFORE_SUBSCRIBED) this.pending.push(event);
      // Nest subscribes as soon as the handler answers; a stream that never gets there is ended
      // through its request's abort signal (see `endWhenAborted`), not left to fill up.
      else this.end();
      return;
    }
    const bytes = sizeOf(event);
    if ((this.socket?.writableLength ?? 0) + this.heldBytes + bytes > MAX_BUFFERED_BYTES) {
      this.overflowed = true;
      this.end();
      return;
    }
    if (this.held.length > 0 || this.socket?.writableNeedDrain === true) {
      this.held.push({ event, bytes });
      this.heldBytes += bytes;
      this.flushOnDrain();
      return;
    }
    this.subscriber.next(event);
  }

  /**
   * Resolves once what was sent has reached the socket and the socket takes more (at once for a
   * stream that has ended): a sender of many events (a resumed stream's catch-up) sends the next
   * part then, so they wait in the socket, not in memory.
   */
  async drained(): Promise<void> {
    // What was handed to Nest reaches the socket in the next turns of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    if (this.ended || (this.held.length === 0 && this.socket?.writableNeedDrain !== true)) return;
    await new Promise<void>((resolve) => {
      this.drainWaiters.push(resolve);
      this.flushOnDrain();
    });
  }

  /** Heartbeats go only to a stream that is being written and not backed up: nothing waits for one. */
  beat(): void {
    if (this.held.length > 0 || this.socket?.writableNeedDrain === true) return;
    this.subscriber?.next({ comment: 'heartbeat' });
  }

  private flushOnDrain(): void {
    if (this.waitingForDrain || !this.socket) return;
    this.waitingForDrain = true;
    this.socket.once('drain', () => {
      this.waitingForDrain = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.held.length > 0 && this.socket?.writableNeedDrain !== true && !this.ended) {
      const { event, bytes } = this.held.shift() as { event: MessageEvent; bytes: number };
      this.heldBytes -= bytes;
      this.subscriber?.next(event);
    }
    if (this.held.length > 0 || this.socket?.writableNeedDrain === true) this.flushOnDrain();
    else for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  /**
   * Ends the stream when its request's lifetime ends (`@SseSignal()`): the client left, even while
   * the stream was being set up, before Nest subscribed (Nest then never does).
   */
  endWhenAborted(signal: AbortSignal): void {
    if (signal.aborted) this.end();
    else signal.addEventListener('abort', () => this.end(), { once: true });
  }

  onEnd(listener: () => void): void {
    if (this.ended) listener();
    else this.endListeners.push(listener);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.held.length = 0;
    this.heldBytes = 0;
    for (const resolve of this.drainWaiters.splice(0)) resolve();
    for (const listener of this.endListeners.splice(0)) listener();
    this.subscriber?.complete();
  }
}

/** `Retry-After` of a stream refused past a limit: streams are held for minutes, not seconds. */
const FULL_RETRY_SECONDS = 30;
/** `Retry-After` while shutting down: another instance takes the client at once. */
const SHUTDOWN_RETRY_SECONDS = 3;

/** A stream refused (429 `RateLimited`), with the `Retry-After` a client should wait. */
function refusal(message: string, retryAfter = FULL_RETRY_SECONDS): AppException {
  const error = new AppException(ErrorCode.RateLimited, message);
  error.headers = { 'Retry-After': retryAfter };
  return error;
}

/** About the bytes an event takes on the wire (its data as JSON, and the field names). */
function sizeOf(event: MessageEvent): number {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data ?? '');
  return data.length + (event.comment?.length ?? 0) + 64;
}

/**
 * The open event streams of this instance: the limits on how many may be open (per instance, per
 * user, per anonymous address), heartbeats so that proxies keep idle streams open, and the end of
 * the streams of a session that is revoked or whose user is banned (at once when the change is
 * announced; at the next heartbeat at the latest, when the session is checked again), and of
 * every stream at shutdown.
 */
@Injectable()
export class EventStreams implements BeforeApplicationShutdown, OnModuleDestroy {
  private readonly logger = new Logger(EventStreams.name);
  private readonly config: EventsConfig;
  private readonly open = new Set<OpenStream>();
  private heartbeat: NodeJS.Timeout | null = null;
  private checking = false;
  private closing = false;

  constructor(
    private readonly sessions: SessionsService,
    config: AppConfig,
    metrics: Metrics,
  ) {
    this.config = config.events;
    metrics.labelledGauge(
      'bms_event_streams_open',
      'Event streams open on this instance',
      'stream',
      () => this.counts(),
    );
  }

  /**
   * Opens a stream, or refuses (429 `RateLimited`) one past a limit, or while shutting down. It
   * ends after EVENTS_MAX_STREAM_SECONDS (its client reconnects and resumes).
   */
  start(
    kind: StreamKind,
    owner: StreamOwner,
    signal: AbortSignal,
    socket: StreamSocket | null,
  ): OpenStream {
    this.checkLimits(owner);
    const stream = new OpenStream(kind, owner, socket);
    stream.endWhenAborted(signal);
    const lifetime = setTimeout(() => stream.end(), this.config.maxStreamMs);
    lifetime.unref();
    stream.onEnd(() => {
      clearTimeout(lifetime);
      if (stream.overflowed) {
        this.logger.warn(
          { stream: kind, limitBytes: MAX_BUFFERED_BYTES },
          'An event stream was ended: its client does not read its events',
        );
      }
    });
    // Headers go out with the first thing written: at once, even when a resumed stream has
    // nothing to replay (a proxy waiting for the first byte would otherwise give up).
    stream.send({ comment: 'open' });
    this.open.add(stream);
    stream.onEnd(() => this.open.delete(stream));
    this.heartbeat ??= this.startHeartbeat();
    return stream;
  }

  /** Ends the streams of a revoked session, or of a user whose sessions changed (a ban). */
  @OnEvent(SessionsInvalidatedEvent.event)
  onSessionsInvalidated({ target }: SessionsInvalidatedEvent): void {
    for (const stream of this.open) {
      const owner = stream.owner;
      if (owner.kind !== 'session') continue;
      if ('session' in target ? owner.sessionId === target.session : owner.userId === target.user) {
        stream.end();
      }
    }
  }

  /** SIGTERM: every stream ends cleanly (its clients reconnect, to another instance). */
  beforeApplicationShutdown(): void {
    this.closing = true;
    this.stopHeartbeat();
    for (const stream of [...this.open]) stream.end();
  }

  onModuleDestroy(): void {
    this.stopHeartbeat();
  }

  private checkLimits(owner: StreamOwner): void {
    if (this.closing) {
      throw refusal('This instance is shutting down; connect again', SHUTDOWN_RETRY_SECONDS);
    }
    const { maxStreams, maxStreamsPerUser, maxStreamsPerAddress, maxAnonymousStreams } =
      this.config;
    // Anonymous streams never take the slots kept for signed-in users.
    if (
      owner.kind === 'anonymous' &&
      this.count((o) => o.kind === 'anonymous') >= maxAnonymousStreams
    ) {
      throw refusal(
        `This instance serves at most ${maxAnonymousStreams} event streams without a session; try again later`,
      );
    }
    if (this.open.size >= maxStreams) {
      throw refusal(`This instance serves at most ${maxStreams} event streams; try again later`);
    }
    if (owner.kind === 'session') {
      const held = this.count((o) => o.kind === 'session' && o.userId === owner.userId);
      if (held >= maxStreamsPerUser) {
        throw refusal(
          `You have ${held} event streams open on this instance, the most allowed; close one first`,
        );
      }
    } else {
      const held = this.count((o) => o.kind === 'anonymous' && o.address === owner.address);
      if (held >= maxStreamsPerAddress) {
        throw refusal(
          `Your address has ${held} event streams open on this instance, the most allowed; close one first`,
        );
      }
    }
  }

  private count(matches: (owner: StreamOwner) => boolean): number {
    let held = 0;
    for (const stream of this.open) if (matches(stream.owner)) held++;
    return held;
  }

  /** The streams open on this instance, by kind. */
  counts(): Record<StreamKind, number> {
    const counts: Record<StreamKind, number> = { guild: 0, bot: 0 };
    for (const stream of this.open) counts[stream.kind]++;
    return counts;
  }

  /** One timer for every stream; it runs only while streams are open. */
  private startHeartbeat(): NodeJS.Timeout {
    const timer = setInterval(() => void this.beat(), this.config.heartbeatMs);
    timer.unref();
    return timer;
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  private async beat(): Promise<void> {
    if (this.open.size === 0) {
      this.stopHeartbeat();
      return;
    }
    for (const stream of this.open) stream.beat();
    // One check at a time, never overlapping: a slow session store delays the checks, not the
    // heartbeats.
    if (this.checking) return;
    this.checking = true;
    try {
      await this.recheckSessions();
    } finally {
      this.checking = false;
    }
  }

  /**
   * A change made where this instance cannot hear of it (the admin CLI without Redis) reaches the
   * session cache within its TTL; each session holding streams is checked again at each heartbeat
   * (once, however many streams it holds), a few at a time.
   */
  private async recheckSessions(): Promise<void> {
    const byToken = new Map<string, OpenStream[]>();
    for (const stream of this.open) {
      if (stream.owner.kind !== 'session') continue;
      const streams = byToken.get(stream.owner.token);
      if (streams) streams.push(stream);
      else byToken.set(stream.owner.token, [stream]);
    }
    const tokens = [...byToken.keys()];
    let failures = 0;
    let reason = '';
    const worker = async (): Promise<void> => {
      for (let token = tokens.pop(); token !== undefined; token = tokens.pop()) {
        try {
          const session = await this.sessions.authenticate(token);
          if (!session || session.state === 'banned' || session.userState === 'banned') {
            byToken.get(token)?.forEach((stream) => stream.end());
          }
        } catch (error) {
          // The store failing is not the session ending: the next heartbeat checks again.
          failures++;
          reason = (error as Error).message;
        }
      }
    };
    await Promise.all(Array.from({ length: SESSION_CHECKS_AT_ONCE }, worker));
    if (failures > 0 && !this.closing) {
      this.logger.warn({ failures, reason }, 'Could not check the sessions of some event streams');
    }
  }
}
