/**
 * Exec requests as they cross the engine channel. A batch repeats a few
 * statement texts many times (a hundred INSERTs of one shape), and the
 * channel's structured clone copies every copy of every text on both sides:
 * about 85 µs of CPU for a 100-INSERT batch, against 28 µs packed. Packed,
 * each distinct statement (text, kind, savepoint) travels once, and each
 * statement of the batch is its index and its parameters.
 */
import { withParams, type ExecRequest, type ExecStatement, type SqlParams, type StatementText } from '../protocol';

export interface PackedRequest extends Omit<ExecRequest, 'statements'> {
  /** Each distinct statement once. */
  readonly texts: StatementText[];
  /** Per statement of the batch: its index in `texts`. */
  readonly at: number[];
  /** Per statement: its parameters, null for none. */
  readonly params: (SqlParams | null)[];
}

function textOf(statement: ExecStatement): StatementText {
  return statement.savepoint === undefined
    ? { sql: statement.sql, kind: statement.kind }
    : { sql: statement.sql, kind: statement.kind, savepoint: statement.savepoint };
}

function sameText(a: StatementText, b: ExecStatement): boolean {
  return a.kind === b.kind && a.savepoint === b.savepoint;
}

export function packRequest(request: ExecRequest): PackedRequest {
  const { statements, ...rest } = request;
  const texts: StatementText[] = [];
  const at: number[] = [];
  const params: (SqlParams | null)[] = [];
  const known = new Map<string, number>();
  for (const statement of statements) {
    let index = known.get(statement.sql);
    if (index === undefined || !sameText(texts[index] as StatementText, statement)) {
      index = texts.length;
      texts.push(textOf(statement));
      known.set(statement.sql, index);
    }
    at.push(index);
    params.push(statement.params ?? null);
  }
  return { ...rest, texts, at, params };
}

export function unpackRequest(packed: PackedRequest): ExecRequest {
  const { texts, at, params, ...rest } = packed;
  const statements: ExecStatement[] = [];
  for (let i = 0; i < at.length; i++) {
    const text = texts[at[i] as number] as StatementText;
    const given = params[i];
    statements.push(given === null || given === undefined ? text : withParams(text, given));
  }
  return { ...rest, statements };
}
