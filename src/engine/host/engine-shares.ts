/**
 * Who gets the engine processes: how many each client (an address) holds,
 * and how much engine time it used of late. No client holds more than its
 * share of the pool; one that holds any takes another only while the pool has
 * room; and among waiting clients, the one that holds the fewest and used the
 * least goes first, so that one student's runaway batches leave the rest of
 * the class its engines. Work that names no client (start-up, snapshots) is
 * neither limited nor counted.
 */

/** Engine time used counts half after this long: what a client did a minute ago hardly weighs. */
const USAGE_HALF_LIFE_MS = 10_000;

interface ClientUse {
  held: number;
  /** Engine time used, decayed to `at`. */
  usedMs: number;
  at: number;
}

/**
 * How many of `processes` one client may hold: its share, rounded to the
 * nearest whole process, at least one (half of three is two: a class behind
 * one address keeps two processes, as it had of four, and leaves one).
 */
export function processesPerClient(processes: number, share: number): number {
  return Math.max(1, Math.round(processes * share));
}

export class EngineShares {
  private readonly clients = new Map<string, ClientUse>();

  /** `perClient`: the most processes one client may hold at once (at least 1). */
  constructor(
    private readonly perClient: number,
    private readonly now: () => number = Date.now,
  ) {}

  heldBy(client: string | undefined): number {
    return client === undefined ? 0 : (this.clients.get(client)?.held ?? 0);
  }

  /** Engine time the client used of late, in ms (decayed). */
  usedBy(client: string | undefined): number {
    const use = client === undefined ? undefined : this.clients.get(client);
    return use === undefined ? 0 : decayed(use, this.now());
  }

  /** `poolFull`: every process the pool keeps for short work is busy. */
  mayTake(client: string | undefined, poolFull: boolean): boolean {
    const held = this.heldBy(client);
    return held === 0 || (held < this.perClient && !poolFull);
  }

  /** Whether `a`'s client goes before `b`'s: fewer processes held, then less time used. */
  before(a: string | undefined, b: string | undefined): boolean {
    const [heldA, heldB] = [this.heldBy(a), this.heldBy(b)];
    return heldA !== heldB ? heldA < heldB : this.usedBy(a) < this.usedBy(b);
  }

  take(client: string | undefined): void {
    if (client === undefined) return;
    const use = this.use(client);
    use.held++;
  }

  /** The client gives a process back after holding it `heldMs`. */
  give(client: string | undefined, heldMs: number): void {
    if (client === undefined) return;
    const use = this.use(client);
    use.held = Math.max(0, use.held - 1);
    use.usedMs += heldMs;
    this.forgetIdle();
  }

  private use(client: string): ClientUse {
    const now = this.now();
    let use = this.clients.get(client);
    if (use === undefined) {
      use = { held: 0, usedMs: 0, at: now };
      this.clients.set(client, use);
    } else {
      use.usedMs = decayed(use, now);
      use.at = now;
    }
    return use;
  }

  /** Clients that hold nothing and whose use has faded are forgotten, so that the map stays as small as the class. */
  private forgetIdle(): void {
    if (this.clients.size < 64) return;
    const now = this.now();
    for (const [client, use] of this.clients) if (use.held === 0 && decayed(use, now) < 1) this.clients.delete(client);
  }
}

function decayed(use: ClientUse, now: number): number {
  return use.usedMs * 0.5 ** ((now - use.at) / USAGE_HALF_LIFE_MS);
}
