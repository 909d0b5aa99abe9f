/**
 * What this server is in a replicated setup, and so whether it may write:
 * a standalone server and a primary write; a replica only reads and names
 * the primary; a primary that a standby replaced (fenced) refuses writes and
 * names the new one. Replication (src/replication/) moves the role; the bus
 * and the exec handler only ask it.
 */
import { EngineError } from '../errors';

/** What this server is: not to be confused with a token's AccessRole (read, write, admin). */
export type ServerRole = 'standalone' | 'primary' | 'replica' | 'fenced';

/** Where a replica stands against its primary. */
export interface ReplicaLag {
  /** Journal seqs the primary has that this replica has not applied. */
  readonly seqBehind: number;
  /** 0 when caught up, else how old the last applied entry is. */
  readonly secondsBehind: number;
  readonly primaryLastSeq: number;
}

/** What /health, /metrics and X-Journal-Seq say about replication. */
export interface ReplicationStatus {
  readonly role: ServerRole;
  readonly stream: string;
  readonly node: string;
  readonly epoch: number;
  /** Where writes go: this server's address on a primary, the primary's elsewhere ('' when not known yet). */
  readonly primary: string;
  /** The journal seq this server's databases hold (applied). */
  readonly appliedSeq: number;
  readonly lag?: ReplicaLag;
  /** A replica that stopped applying (a gap, a damaged chunk, a restore it cannot rebuild): why, and the code when it has one. */
  readonly halted?: { readonly error: string; readonly code?: number };
}

/** The refusal of a primary another server took over from: it names the new one (its address when known). */
export function notPrimary(by: { node: string; epoch: number; url: string }): EngineError {
  return new EngineError(
    'NOT_PRIMARY',
    { node: by.node, epoch: by.epoch, primary: by.url === '' ? 'the new primary' : by.url },
    { details: { primary: by.url, epoch: by.epoch } },
  );
}

/** The role this server holds now, and where its primary is: replication moves it, writes ask it. */
export class ServerRoleState {
  private current: ServerRole;
  private primaryUrl = '';
  private fencedBy: { node: string; epoch: number } | null = null;

  constructor(initial: ServerRole) {
    this.current = initial;
  }

  get role(): ServerRole {
    return this.current;
  }

  get primary(): string {
    return this.primaryUrl;
  }

  /** Throws the refusal this server gives a write (`action` says what was asked) when it may not write. */
  assertWritable(action: string): void {
    if (this.current === 'replica')
      throw new EngineError(
        'READ_ONLY_REPLICA',
        { action, primary: this.primaryUrl === '' ? 'whichever server holds the primary lease' : this.primaryUrl },
        { details: { primary: this.primaryUrl } },
      );
    if (this.current === 'fenced') {
      throw notPrimary({ ...(this.fencedBy ?? { node: 'another server', epoch: 0 }), url: this.primaryUrl });
    }
  }

  /** A replica learns (or re-learns) where its primary is. */
  following(primaryUrl: string): void {
    this.primaryUrl = primaryUrl;
  }

  becomePrimary(url: string): void {
    this.current = 'primary';
    this.primaryUrl = url;
    this.fencedBy = null;
  }

  becomeReplica(): void {
    this.current = 'replica';
  }

  fenced(by: { node: string; epoch: number; url: string }): void {
    this.current = 'fenced';
    this.fencedBy = { node: by.node, epoch: by.epoch };
    this.primaryUrl = by.url;
  }
}

/** What the HTTP side may ask of replication: the status, read-your-writes, and a standby's takeover. */
export interface ReplicationControl {
  status(): ReplicationStatus;
  /** True once this server's databases hold `seq`; false when `timeoutMs` passed first. */
  waitForSeq(seq: number, timeoutMs: number): Promise<boolean>;
  /** A replica takes over as primary; throws PROMOTION_REFUSED when it cannot. */
  promote(): Promise<ReplicationStatus>;
}
