/**
 * Read-your-writes across servers. Every answer of a replicated server says,
 * in X-Journal-Seq, the journal seq its databases hold (on the primary: at
 * least the seq of every write it has acknowledged). A client that wrote on
 * the primary sends that number to a replica as X-Min-Seq: the replica waits
 * until it has applied that far (at most -min-seq-wait), or answers 409
 * REPLICA_BEHIND rather than serve older data.
 */
import type { Context, Next } from 'koa';
import { EngineError } from '../errors';
import type { ReplicationStatus } from '../services/server-role';

export interface SeqSource {
  status(): ReplicationStatus;
  /** True once the databases hold `seq`; false when `timeoutMs` passed first. */
  waitForSeq(seq: number, timeoutMs: number): Promise<boolean>;
}

function minSeqOf(ctx: Context): number | null {
  const text = ctx.get('X-Min-Seq').trim();
  if (text === '') return null;
  if (!/^\d{1,15}$/.test(text)) throw new EngineError('BAD_REQUEST', { detail: `X-Min-Seq must be a journal seq (a whole number), not ${JSON.stringify(text.slice(0, 40))}` });
  return Number(text);
}

export function journalSeq(source: SeqSource, waitMs: number) {
  return async function answerWithJournalSeq(ctx: Context, next: Next): Promise<void> {
    const wanted = minSeqOf(ctx);
    if (wanted !== null && source.status().appliedSeq < wanted && !(await source.waitForSeq(wanted, waitMs))) {
      const status = source.status();
      throw new EngineError('REPLICA_BEHIND', { applied: status.appliedSeq, wanted, ms: waitMs, primary: status.primary === '' ? 'the primary' : status.primary }, { details: { applied: status.appliedSeq, wanted, primary: status.primary } });
    }
    // Set before the answer is written: a streamed body sends its headers early.
    ctx.set('X-Journal-Seq', String(source.status().appliedSeq));
    await next();
    ctx.set('X-Journal-Seq', String(source.status().appliedSeq));
  };
}
