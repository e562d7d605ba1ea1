import { EventEmitter } from 'node:events';
import type { MessageEvent } from '@nestjs/common';
import {
  anonymousOwner,
  MAX_BUFFERED_BYTES,
  OpenStream,
  type StreamSocket,
} from 'src/events/event-streams';

/** A socket whose unsent bytes and back-pressure the test sets, and which drains on demand. */
class FakeSocket extends EventEmitter implements StreamSocket {
  writableLength = 0;
  writableNeedDrain = false;

  drain(): void {
    this.writableLength = 0;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
}

function subscribed(socket: FakeSocket): { stream: OpenStream; received: MessageEvent[] } {
  const stream = new OpenStream('guild', anonymousOwner('203.0.113.7'), socket);
  const received: MessageEvent[] = [];
  stream.events.subscribe((event) => received.push(event));
  return { stream, received };
}

const event = (n: number, bytes = 100): MessageEvent => ({
  type: 'settings',
  id: String(n),
  data: 'x'.repeat(bytes),
});

describe('OpenStream', () => {
  it('sends at once while the socket takes data', () => {
    const { stream, received } = subscribed(new FakeSocket());
    stream.send(event(1));
    stream.send(event(2));
    expect(received.map((e) => e.id)).toEqual(['1', '2']);
  });

  it('holds events while the socket needs draining, and sends them in order once it drains', () => {
    const socket = new FakeSocket();
    const { stream, received } = subscribed(socket);
    stream.send(event(1));
    socket.writableNeedDrain = true;
    stream.send(event(2));
    stream.send(event(3));
    stream.beat();
    expect(received.map((e) => e.id)).toEqual(['1']);
    socket.drain();
    expect(received.map((e) => e.id)).toEqual(['1', '2', '3']);
    stream.beat();
    expect(received.at(-1)).toEqual({ comment: 'heartbeat' });
  });

  it.each([
    ['the socket holds it all', MAX_BUFFERED_BYTES, 0],
    ['events wait for it', 20_000, 24],
  ])('ends the stream once the bytes it holds pass the budget (%s)', (_case, unsent, events) => {
    const socket = new FakeSocket();
    const { stream } = subscribed(socket);
    socket.writableLength = unsent;
    socket.writableNeedDrain = true;
    for (let i = 0; i < events; i++) stream.send(event(i, 10_000));
    expect(stream.isOpen).toBe(true);
    stream.send(event(99, 10_000));
    expect(stream.isOpen).toBe(false);
    expect(stream.overflowed).toBe(true);
  });

  it('resolves drained() once the socket has taken what was held, and at once when ended', async () => {
    const socket = new FakeSocket();
    const { stream } = subscribed(socket);
    socket.writableNeedDrain = true;
    stream.send(event(1));
    let drained = false;
    const waiting = stream.drained().then(() => (drained = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(drained).toBe(false);
    socket.drain();
    await waiting;
    expect(drained).toBe(true);
    socket.writableNeedDrain = true;
    stream.send(event(2));
    const again = stream.drained();
    stream.end();
    await expect(again).resolves.toBeUndefined();
  });
});

describe('anonymousOwner', () => {
  it.each([
    ['2001:db8:1:2::1', '2001:db8:1:ffff::9'],
    ['203.0.113.7', '::ffff:203.0.113.7'],
  ])('counts %s and %s as one network', (a, b) => {
    expect(anonymousOwner(a)).toEqual(anonymousOwner(b));
  });

  it('counts two sites apart', () => {
    expect(anonymousOwner('2001:db8:1::1')).not.toEqual(anonymousOwner('2001:db8:2::1'));
  });
});
