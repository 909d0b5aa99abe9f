/**
 * Statement results as they cross the engine channel. Most results of a
 * write are plain: no columns, no rows, a message and a count of changes.
 * Sent as they are, each is an object with two empty arrays, and the channel's
 * structured clone pays for every one of them on both sides: a 100-INSERT
 * batch cost about 80 µs of the two processes' CPU in its reply alone. Packed,
 * the plain results travel as two flat arrays (messages and changes) and only
 * the others (rows, types, a cut page) as objects; the server unpacks them
 * into the very objects the engine made.
 */
import type { EngineErrorData } from '../../errors';
import type { GroupOutcome, StatementResult } from '../protocol';

export interface PackedResults {
  /** Per result: its message when it is plain, null when it is the next of `others`. */
  readonly messages: (string | null)[];
  /** Per plain result: its changes (0 for the others). */
  readonly changes: number[];
  /** The results that are not plain, in order. */
  readonly others: StatementResult[];
}

export type PackedOutcome = { packed: PackedResults } | { error: EngineErrorData };

/** A result that is a message and a count and nothing else (the engine makes them so: statement-runner.ts). */
function isPlain(result: StatementResult): result is StatementResult & { message: string; changes: number } {
  return (
    result.columns.length === 0 &&
    result.rows.length === 0 &&
    typeof result.message === 'string' &&
    typeof result.changes === 'number' &&
    Object.keys(result).length === 4
  );
}

export function packResults(results: readonly StatementResult[]): PackedResults {
  // Grown by push, not made at their length: an array with holes crosses as a sparse one, slower.
  const messages: (string | null)[] = [];
  const changes: number[] = [];
  const others: StatementResult[] = [];
  for (const result of results) {
    if (isPlain(result)) {
      messages.push(result.message);
      changes.push(result.changes);
    } else {
      messages.push(null);
      changes.push(0);
      others.push(result);
    }
  }
  return { messages, changes, others };
}

export function unpackResults(packed: PackedResults): StatementResult[] {
  const { messages, changes, others } = packed;
  const results: StatementResult[] = [];
  let other = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    // The same keys in the same order as statement-runner.ts writes them: the answer's JSON is the same.
    results.push(
      message === null || message === undefined
        ? (others[other++] as StatementResult)
        : { columns: [], rows: [], message, changes: changes[i] },
    );
  }
  return results;
}

export function packOutcomes(outcomes: readonly GroupOutcome[]): PackedOutcome[] {
  return outcomes.map((outcome) => ('results' in outcome ? { packed: packResults(outcome.results) } : outcome));
}

export function unpackOutcomes(outcomes: readonly PackedOutcome[]): GroupOutcome[] {
  return outcomes.map((outcome) => ('packed' in outcome ? { results: unpackResults(outcome.packed) } : outcome));
}
