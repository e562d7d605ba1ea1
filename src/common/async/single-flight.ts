/**
 * Runs one task per key at a time: a caller asking for a key whose task is under way gets that
 * task's promise instead of starting another. The key is free again once the task settles.
 */
export class SingleFlight<V> {
  private readonly running = new Map<string, Promise<V>>();

  run(key: string, task: () => Promise<V>): Promise<V> {
    let running = this.running.get(key);
    if (!running) {
      running = task().finally(() => this.running.delete(key));
      this.running.set(key, running);
    }
    return running;
  }
}
