/**
 * When tokens expire: one timer, armed for the soonest expiry still ahead,
 * tells its listener of each token at the moment it expires. A request
 * checks expiry itself (TokenRegistry.authenticate); this is for what a token
 * holds across requests (a live journal feed, a session), which no later
 * request would check.
 */
import type { Clock, Timer } from '../clock';

/** A timer longer than this is armed in steps (setTimeout takes at most 2^31-1 ms, about 24.8 days). */
const LONGEST_WAIT_MS = 24 * 60 * 60 * 1000;

export class TokenExpiry {
  private timer: Timer | null = null;
  private expiries: ReadonlyMap<string, number> = new Map();
  /** Tokens already told of, so that each is told once. */
  private readonly told = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly expired: (id: string) => void,
  ) {}

  /** The expiry (ms since the epoch) of every token that has one; re-arms the timer. */
  watch(expiries: ReadonlyMap<string, number>): void {
    this.expiries = expiries;
    for (const id of this.told) if (!expiries.has(id)) this.told.delete(id);
    this.arm();
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private arm(): void {
    this.stop();
    const now = this.clock.now();
    let soonest = Infinity;
    for (const [id, at] of this.expiries) {
      if (this.told.has(id)) continue;
      if (at <= now) {
        this.told.add(id);
        this.expired(id);
      } else if (at < soonest) soonest = at;
    }
    if (soonest === Infinity) return;
    this.timer = this.clock.after(Math.min(soonest - now, LONGEST_WAIT_MS), () => this.arm());
  }
}
