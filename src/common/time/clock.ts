import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The current time, the one clock of every service (provided once, by ClockModule), so that
 * time-dependent rules can be tested at a fixed instant.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  /** Epoch milliseconds. */
  nowMs(): number {
    return Date.now();
  }
}

@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
