/**
 * A result's rows written as JSON text as they are read (ExecRequest.jsonRows),
 * in chunks of about 256 KB whose concatenation is one JSON array: a big
 * result is never joined into one string, neither here nor in the server,
 * which sends the chunks one after another.
 */
import { stringifyJson } from '../json-text';
import type { ResultValue } from './protocol';

const CHUNK_CHARS = 256 * 1024;

/**
 * A row's JSON text. A row holds JSON scalars, and a bigint only for an
 * integer beyond 2^53: the native stringify takes every other row directly,
 * without the general writer's checks, which a thousand rows a page feel.
 */
function rowJson(row: readonly ResultValue[]): string {
  for (const value of row) if (typeof value === 'bigint') return stringifyJson(row);
  return JSON.stringify(row);
}

export class JsonRowChunks {
  private readonly chunks: string[] = [];
  private rows: string[] = [];
  private chars = 0;

  get empty(): boolean {
    return this.chunks.length === 0 && this.rows.length === 0;
  }

  add(row: readonly ResultValue[]): void {
    const text = rowJson(row);
    this.rows.push(text);
    this.chars += text.length;
    if (this.chars >= CHUNK_CHARS) this.flush();
  }

  /** The chunks; `[]` when no row was added. */
  done(): string[] {
    this.flush();
    return this.chunks.length === 0 ? ['[]'] : [...this.chunks, ']'];
  }

  private flush(): void {
    if (this.rows.length === 0) return;
    // The opening bracket (or the comma after the chunk before) goes on the first row, not on the joined
    // chunk: a concatenation would be flattened into a copy of the whole chunk when it is sent.
    this.rows[0] = (this.chunks.length === 0 ? '[' : ',') + this.rows[0];
    this.chunks.push(this.rows.join(','));
    this.rows = [];
    this.chars = 0;
  }
}
