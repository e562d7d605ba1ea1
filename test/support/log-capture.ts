import { Writable } from 'node:stream';

/** A log destination that keeps every line, parsed, for assertions on what was logged. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }

  /** Every captured line serialised, for "this secret never appears" checks. */
  text(): string {
    return this.lines.map((line) => JSON.stringify(line)).join('\n');
  }
}
