import { createServer, connect, type NetConnectOpts, type Socket } from 'node:net';

/** Where the proxy forwards: a host and port, or a Unix socket's path (the embedded database). */
export type ProxyTarget = { host: string; port: number } | { path: string };

/**
 * A loopback TCP proxy that a test can cut and restore, to make a dependency unreachable (and
 * reachable again) without stopping it.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private down = false;
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

  /** Drops every open connection and refuses new ones. */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
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
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}
