/**
 * At most a few restores and dry runs at once per server, the rest waiting
 * in turn: each holds a rebuild process (restore-process.ts) that takes a
 * core while it runs, so ten students pressing Undo together must not start
 * ten. A request stopped while it waits (its client gone, its
 * -request-timeout passed) leaves the queue with its stop. Nothing else of
 * the server waits here: only restores take these slots.
 */
import { EngineError } from '../../errors';
import type { RequestStop } from '../../engine/protocol';
import { onStop, stopOf } from '../../engine/host/request-stop';

/**
 * Two: a rebuild is CPU-bound, and the small machines a class runs on have
 * two cores or four, shared with the server and its engine processes; two at
 * once (at a lower priority) keep a queue of undos moving without taking
 * every core.
 */
export const RESTORES_AT_ONCE = 2;

interface Waiter {
  start(): void;
  detach(): void;
}

export class RestoreSlots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly max: number = RESTORES_AT_ONCE) {}

  /** Runs `work` once a slot is free (`db` names the restore in a stop's error); the slot is given back however it ends. */
  async run<T>(db: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    await this.take(db, signal);
    try {
      return await work();
    } finally {
      this.give();
    }
  }

  /** Restores running and waiting (tests, metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private take(db: string, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted === true) return Promise.reject(this.stopped(db, stopOf(signal)));
    if (this.running < this.max && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          waiter.detach();
          this.running++;
          resolve();
        },
        detach: () => undefined,
      };
      if (signal !== undefined) {
        const stopListening = onStop(signal, (stop) => {
          const at = this.waiting.indexOf(waiter);
          if (at !== -1) this.waiting.splice(at, 1);
          reject(this.stopped(db, stop));
        });
        waiter.detach = stopListening;
      }
      this.waiting.push(waiter);
    });
  }

  private give(): void {
    this.running--;
    this.waiting.shift()?.start();
  }

  private stopped(db: string, stop: RequestStop): EngineError {
    if (stop.reason === 'gone') return new EngineError('CLIENT_CLOSED');
    return new EngineError('RESTORES_BUSY', { db, ms: stop.ms, max: this.max }, { retryAfter: 1 });
  }
}
