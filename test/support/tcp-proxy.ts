import { connect, createServer, type NetConnectOpts, type Socket } from 'node:net';

/** Where the proxy forwards: a host and port, or a Unix socket's path (the embedded database). */
export type ProxyTarget = { host: string; port: number } | { path: string };

/**
 * A loopback TCP proxy that a test (or the fault suite, `npm run bench:faults`) can cut, stall and
 * restore, to make a dependency unreachable or unresponsive without stopping it. `cut()` drops
 * every connection and refuses new ones (a server gone); `stall()` keeps connections open but
 * forwards nothing, in either direction, new connections included (a server that hangs, a network
 * that drops packets); `resume()` delivers what was held, in order, and forwards again.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private down = false;
  private stalled = false;
  /** See stallAfterClientSends. */
  private stallAfter: Buffer | null = null;
  /** Writes held while stalled, in the order they arrived. */
  private held: (() => void)[] = [];
  private readonly server = createServer((client) => this.forward(client));

  private constructor(private readonly target: ProxyTarget) {}

  static async start(target: ProxyTarget): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy is not listening');
    return address.port;
  }

  /** Drops every open connection and refuses new ones until `restore()`. */
  cut(): void {
    this.down = true;
    this.held = [];
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
  }

  /** Forwards nothing, in either direction, until `resume()`; connections stay open. */
  stall(): void {
    this.stalled = true;
  }

  /**
   * Forwards on until a client sends `text` (a statement, say), forwards that too, then stalls:
   * the server gets the statement, and its answer is held (an answer lost on the way back).
   */
  stallAfterClientSends(text: string): void {
    this.stallAfter = Buffer.from(text);
  }

  resume(): void {
    this.stalled = false;
    this.stallAfter = null;
    const held = this.held;
    this.held = [];
    for (const write of held) write();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(client: Socket): void {
    if (this.down) {
      client.destroy();
      return;
    }
    const upstream = connect(this.target as NetConnectOpts);
    this.track(client);
    this.track(upstream);
    this.relay(client, upstream, true);
    this.relay(upstream, client, false);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  private relay(from: Socket, to: Socket, fromClient: boolean): void {
    from.on('data', (chunk: Buffer) => {
      this.send(() => to.write(chunk));
      if (fromClient && this.stallAfter && chunk.includes(this.stallAfter)) {
        this.stallAfter = null;
        this.stall();
      }
    });
    from.on('end', () => this.send(() => to.end()));
  }

  private send(write: () => void): void {
    if (this.stalled) this.held.push(write);
    else write();
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}
