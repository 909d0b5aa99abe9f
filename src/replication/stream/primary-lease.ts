/**
 * The primary lease: one key in a JetStream key-value bucket says which
 * server may publish the journal, and under which epoch. Taking it is a
 * compare-and-set on the key's revision, so two servers racing for it cannot
 * both win; each win raises the epoch, the fencing token every chunk of the
 * winner carries. The lease says who should publish; the stream's
 * expected-last-sequence check (journal-stream.ts) is what refuses anyone else.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { JournalStream } from './journal-stream';

export interface LeaseHolder {
  readonly epoch: number;
  readonly node: string;
  /** Where clients reach the holder (replicas name it in their refusals). */
  readonly url: string;
  readonly since: string;
}

export interface LeaseState {
  readonly holder: LeaseHolder;
  readonly revision: number;
}

/** Someone else changed the lease between our read and our write. */
export class LeaseLostError extends Error {}

const KEY = 'primary';

export function leaseBucketOf(stream: string): string {
  return `${stream}_lease`;
}

export class PrimaryLease {
  private constructor(private readonly kv: KV) {}

  static async open(stream: JournalStream): Promise<PrimaryLease> {
    const kv = await new Kvm(stream.connection).create(leaseBucketOf(stream.settings.stream), {
      replicas: stream.settings.replicas,
      history: 10,
    });
    return new PrimaryLease(kv);
  }

  async read(): Promise<LeaseState | null> {
    const entry = await this.kv.get(KEY);
    if (entry === null || entry.operation !== 'PUT' || entry.length === 0) return null;
    return { holder: entry.json<LeaseHolder>(), revision: entry.revision };
  }

  /**
   * Takes the lease from the state read as `current` (null: nobody held it),
   * with the next epoch; throws LeaseLostError when it changed meanwhile.
   */
  async take(current: LeaseState | null, node: string, url: string): Promise<LeaseHolder> {
    const holder: LeaseHolder = { epoch: (current?.holder.epoch ?? 0) + 1, node, url, since: new Date().toISOString() };
    const value = JSON.stringify(holder);
    try {
      if (current === null) await this.kv.create(KEY, value);
      else await this.kv.update(KEY, value, current.revision);
    } catch (error) {
      throw new LeaseLostError(`the primary lease changed while this server took it (${(error as Error).message})`, {
        cause: error,
      });
    }
    return holder;
  }

  /** Says where this holder is reached now (its address changes with each start), without a new epoch. */
  async renew(current: LeaseState, url: string): Promise<LeaseHolder> {
    const holder: LeaseHolder = { ...current.holder, url };
    try {
      await this.kv.update(KEY, JSON.stringify(holder), current.revision);
    } catch (error) {
      throw new LeaseLostError(`the primary lease changed while this server renewed it (${(error as Error).message})`, {
        cause: error,
      });
    }
    return holder;
  }
}
