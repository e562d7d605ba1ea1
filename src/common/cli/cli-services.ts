import type { INestApplicationContext, OnApplicationShutdown, Type } from '@nestjs/common';

/**
 * The service's modules as the admin CLI's commands use them (the database, Redis, the platform
 * client, the settings engine), started when a command first asks for one of their services. Help,
 * an unknown command and a wrong argument are answered before that, so they open neither the
 * database nor Redis, and work beside a service that holds the embedded database.
 */
export class CliServices implements OnApplicationShutdown {
  private context: Promise<INestApplicationContext> | null = null;

  /** `start` creates the application context of the service's modules. */
  constructor(private readonly start: () => Promise<INestApplicationContext>) {}

  async get<T>(type: Type<T>): Promise<T> {
    this.context ??= this.start();
    return (await this.context).get(type);
  }

  /** Closes the modules when they were started (the embedded database is flushed and released). */
  async onApplicationShutdown(): Promise<void> {
    const context = await this.context?.catch(() => null);
    await context?.close();
  }
}
