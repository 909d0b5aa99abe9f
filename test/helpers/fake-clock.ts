/** A clock that moves only when a test moves it (src/clock.ts). */
import type { Clock, Timer } from '../../src/clock';

export class FakeClock implements Clock {
  private nowMs = Date.parse('2026-11-25T08:00:00Z');
  private timers: Array<{ at: number; fn: () => void }> = [];

  now(): number {
    return this.nowMs;
  }

  after(ms: number, fn: () => void): Timer {
    const timer = { at: this.nowMs + ms, fn };
    this.timers.push(timer);
    return { cancel: () => void (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  /** Moves time on by `ms`, firing each timer that comes due, in order. */
  advance(ms: number): void {
    const to = this.nowMs + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= to).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = due.at;
      due.fn();
    }
    this.nowMs = to;
  }

  /** Moves time on by `ms` without firing any timer: as if the process had been too busy to run them. */
  skip(ms: number): void {
    this.nowMs += ms;
  }
}
