/**
 * A result's rows written as JSON text as they are read (ExecRequest.jsonRows),
 * in chunks of about 256 KB whose concatenation is one JSON array: a big
 * result is never joined into one string, neither here nor in the server,
 * which sends the chunks one after another.
 *
 * Rows are written a block at a time, each block with one native stringify:
 * a thousand rows written one by one and joined cost about twice as much.
 */
import { stringifyJson } from '../../json-text';
import type { ResultValue } from '../protocol';

/** A block of rows is written once it weighs this much (as convertRowWeighed counts). */
const CHUNK_CHARS = 256 * 1024;

/** Whether a row holds ±Infinity, which the native stringify writes as `null`. */
function rowsHoldInfinity(rows: readonly (readonly ResultValue[])[]): boolean {
  for (const row of rows) for (const value of row) if (value === Infinity || value === -Infinity) return true;
  return false;
}

/**
 * Rows as one JSON array. Rows hold JSON scalars, a bigint only for an
 * integer beyond 2^53, and now and then ±Infinity: the native stringify takes
 * every other block directly, and refuses one with a bigint, which our writer
 * then takes, as it takes one whose `null` may be an infinite number
 * (json-text.ts writes it as ±9e999).
 */
export function rowsJsonText(rows: readonly (readonly ResultValue[])[]): string {
  let text: string;
  try {
    text = JSON.stringify(rows);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return stringifyJson(rows);
  }
  return text.includes('null') && rowsHoldInfinity(rows) ? stringifyJson(rows) : text;
}

export class JsonRowChunks {
  private readonly chunks: string[] = [];
  private block: ResultValue[][] = [];
  private weight = 0;

  get empty(): boolean {
    return this.chunks.length === 0 && this.block.length === 0;
  }

  /** `weight`: about how long the row's JSON is (convertRowWeighed). */
  add(row: ResultValue[], weight: number): void {
    this.block.push(row);
    this.weight += weight;
    if (this.weight >= CHUNK_CHARS) this.flush();
  }

  /** The chunks; `['[]']` when no row was added. */
  done(): string[] {
    // One block (most results): its array is the whole text.
    if (this.chunks.length === 0) return [rowsJsonText(this.block)];
    this.flush();
    return [...this.chunks, ']'];
  }

  private flush(): void {
    if (this.block.length === 0) return;
    const text = rowsJsonText(this.block);
    // Each block's text without its brackets, and the comma between blocks as a chunk of its own: the
    // slices share the block's text, where a concatenation would be flattened into a copy when it is sent.
    if (this.chunks.length === 0) this.chunks.push(text.slice(0, -1));
    else this.chunks.push(',', text.slice(1, -1));
    this.block = [];
    this.weight = 0;
  }
}
