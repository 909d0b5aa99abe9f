/**
 * The arguments of the introspection functions, checked as the statement
 * runs. `pragma_table_info(m.name)` may take its table from any expression
 * (a column of the schema table, of a student's table, a concatenation), so
 * no reading of the text can tell which table it names. The runner wraps
 * each of the first two arguments of every introspection function in a
 * function of the engine's connection: the first (the table or index) is
 * refused when it names one of the service's objects, the second (the
 * schema) unless it is main. Anything else passes through unchanged, so the
 * answer is SQLite's.
 *
 * Only what the runner prepares is wrapped; the client's text (the journal,
 * the history) is left as written, and a result column named after an
 * expression that holds a wrapped argument is named as the client wrote it.
 */
import type Database from 'better-sqlite3';
import { EngineError } from '../../errors';
import { checkSchemaName, introspectionFunction, isInternalObject } from './pragmas';
import { closingParen, isPunct, nameOf, tokenize, type Token } from './tokenize';

/** The table or index argument's check. Not a name clients can mistake for SQLite's own. */
const OBJECT_GUARD = 'introspection_object';
/** The schema argument's check. */
const SCHEMA_GUARD = 'introspection_schema';
const GUARDS = new Set([OBJECT_GUARD, SCHEMA_GUARD]);
/** What every wrapped text holds, so that the rest is not tokenized again. */
const GUARD_MARK = 'introspection_';

interface Insertion {
  readonly at: number;
  readonly text: string;
}

/** The text the runner prepares: each argument of an introspection function wrapped in its check. */
export function guardIntrospection(sql: string): string {
  if (!/pragma_/i.test(sql)) return sql;
  const tokens = tokenize(sql);
  const insertions: Insertion[] = [];
  tokens.forEach((token, i) => {
    if (token.kind !== 'word' && token.kind !== 'identifier' && token.kind !== 'string') return;
    if (!isPunct(tokens[i + 1], '(') || introspectionFunction(nameOf(token)) === undefined) return;
    argumentRanges(tokens, i + 1).forEach(([from, to], n) => {
      if (n > 1) return; // SQLite refuses a third argument itself.
      const first = tokens[from] as Token;
      const last = tokens[to - 1] as Token;
      insertions.push({ at: first.start, text: `${n === 0 ? OBJECT_GUARD : SCHEMA_GUARD}(` });
      insertions.push({ at: last.end, text: ')' });
    });
  });
  let out = '';
  let at = 0;
  for (const insertion of insertions.sort((a, b) => a.at - b.at)) {
    out += sql.slice(at, insertion.at) + insertion.text;
    at = insertion.at;
  }
  return out + sql.slice(at);
}

/** The [from, to) token ranges of the comma-separated arguments inside the parentheses opened at `open`. */
function argumentRanges(tokens: readonly Token[], open: number): Array<[number, number]> {
  const close = closingParen(tokens, open);
  const ranges: Array<[number, number]> = [];
  let start = open + 1;
  for (let i = open + 1; i < close; i++) {
    if (isPunct(tokens[i], '(')) i = closingParen(tokens, i);
    else if (isPunct(tokens[i], ',')) {
      if (i > start) ranges.push([start, i]);
      start = i + 1;
    }
  }
  if (close > start) ranges.push([start, close]);
  return ranges;
}

/**
 * A result column's name as the client wrote it: SQLite names a column after
 * the text of its expression, which in the prepared text holds the checks.
 */
export function unguardedName(name: string): string {
  if (!name.includes(GUARD_MARK)) return name;
  let tokens: Token[];
  try {
    tokens = tokenize(name);
  } catch {
    return name;
  }
  const cuts: Array<[number, number]> = [];
  tokens.forEach((token, i) => {
    const open = tokens[i + 1];
    if (token.kind !== 'word' || !GUARDS.has(token.text) || open === undefined || !isPunct(open, '(')) return;
    const close = tokens[closingParenOrEnd(tokens, i + 1)];
    cuts.push([token.start, open.end]);
    if (close !== undefined) cuts.push([close.start, close.end]);
  });
  let out = '';
  let at = 0;
  for (const [start, end] of cuts.sort((a, b) => a[0] - b[0])) {
    out += name.slice(at, start);
    at = end;
  }
  return out + name.slice(at);
}

function closingParenOrEnd(tokens: readonly Token[], open: number): number {
  try {
    return closingParen(tokens, open);
  } catch {
    return tokens.length;
  }
}

/** The text SQLite reads of a value given as a pragma's argument (a blob's bytes are read as text). */
function argumentText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/** Defines the checks on a connection; every connection that runs a client's statements has them. */
export function defineIntrospectionGuards(db: Database.Database): void {
  db.function(OBJECT_GUARD, { deterministic: true, safeIntegers: true }, (value: unknown) => {
    const text = argumentText(value);
    if (text !== undefined && isInternalObject(text)) {
      throw new EngineError('FORBIDDEN_STATEMENT', { detail: `the name ${text}` });
    }
    return value;
  });
  db.function(SCHEMA_GUARD, { deterministic: true, safeIntegers: true }, (value: unknown) => {
    // A number is no schema's name: SQLite answers "unknown database" for it, and so is it refused here.
    if (value !== null) checkSchemaName(argumentText(value) ?? '(a number)', 'a pragma_* function');
    return value;
  });
}
