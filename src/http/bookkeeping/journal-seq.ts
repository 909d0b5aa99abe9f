/**
 * Read-your-writes across servers. Every answer of a replicated server says,
 * in X-Journal-Seq, the journal seq its databases hold (on the primary: at
 * least the seq of every write it has acknowledged). A client that wrote on
 * the primary sends that number to a replica as X-Min-Seq: the replica waits
 * until it has applied that far (at most -min-seq-wait), or answers 409
 * REPLICA_BEHIND rather than serve older data.
 */
import type { Context } from 'koa';
import { EngineError } from '../../errors';
import type { ReplicationStatus } from '../../services/server-role';

export interface SeqSource {
  status(): ReplicationStatus;
  /** True once the databases hold `seq`; false when `timeoutMs` passed first. */
  waitForSeq(seq: number, timeoutMs: number): Promise<boolean>;
}

function minSeqOf(ctx: Context): number | null {
  const text = ctx.get('X-Min-Seq').trim();
  if (text === '') return null;
  if (!/^\d{1,15}$/.test(text))
    throw new EngineError('BAD_REQUEST', {
      detail: `X-Min-Seq must be a journal seq (a whole number), not ${JSON.stringify(text.slice(0, 40))}`,
    });
  return Number(text);
}

/**
 * Waits, if the request asks for it (X-Min-Seq), until the databases hold
 * that seq, or refuses it with REPLICA_BEHIND; undefined when there is
 * nothing to wait for, so that most requests await nothing here.
 */
export function awaitMinSeq(ctx: Context, source: SeqSource, waitMs: number): Promise<void> | undefined {
  const wanted = minSeqOf(ctx);
  if (wanted === null || source.status().appliedSeq >= wanted) return undefined;
  return source.waitForSeq(wanted, waitMs).then((reached) => {
    if (reached) return;
    const status = source.status();
    throw new EngineError(
      'REPLICA_BEHIND',
      {
        applied: status.appliedSeq,
        wanted,
        ms: waitMs,
        primary: status.primary === '' ? 'the primary' : status.primary,
      },
      { details: { applied: status.appliedSeq, wanted, primary: status.primary } },
    );
  });
}

/** X-Journal-Seq: set before the answer is written (a streamed body sends its headers early), and again once it is ready. */
export function stampJournalSeq(ctx: Context, source: SeqSource): void {
  ctx.set('X-Journal-Seq', String(source.status().appliedSeq));
}
