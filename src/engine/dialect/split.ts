/**
 * Splits a request's SQL into statements on top-level semicolons.
 *
 * Semicolons inside strings, quoted identifiers and comments never split,
 * because they are not semicolon tokens. Inside `CREATE [TEMP] TRIGGER … END`
 * the body's semicolons do not split either: the state machine below is the
 * one of sqlite3_complete() (https://sqlite.org/src/file/src/complete.c), so
 * a statement ends exactly where SQLite's shell would end it.
 */

import { isWord, tokenize, type Token } from './tokenize';

/** The token classes of sqlite3_complete(). Whitespace and comments never reach us. */
const Tk = { Semi: 0, Other: 1, Explain: 2, Create: 3, Temp: 4, Trigger: 5, End: 6 } as const;
type Tk = (typeof Tk)[keyof typeof Tk];

/** The states of sqlite3_complete() that matter once whitespace is gone. */
const State = { Start: 0, Normal: 1, Explain: 2, Create: 3, Trigger: 4, Semi: 5, End: 6 } as const;
type State = (typeof State)[keyof typeof State];

/**
 * TRANSITIONS[state][token] → next state; a Semi token in Start, Normal,
 * Explain, Create or End ends the statement.
 */
const TRANSITIONS: readonly (readonly State[])[] = [
  /* Start   */ [State.Start, State.Normal, State.Explain, State.Create, State.Normal, State.Normal, State.Normal],
  /* Normal  */ [State.Start, State.Normal, State.Normal, State.Normal, State.Normal, State.Normal, State.Normal],
  /* Explain */ [State.Start, State.Explain, State.Normal, State.Create, State.Normal, State.Normal, State.Normal],
  /* Create  */ [State.Start, State.Normal, State.Normal, State.Normal, State.Create, State.Trigger, State.Normal],
  /* Trigger */ [State.Semi, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger],
  /* Semi    */ [State.Semi, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.End],
  /* End     */ [State.Start, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger],
];

function classOf(token: Token): Tk {
  if (token.kind === 'semicolon') return Tk.Semi;
  if (isWord(token, 'EXPLAIN')) return Tk.Explain;
  if (isWord(token, 'CREATE')) return Tk.Create;
  if (isWord(token, 'TEMP', 'TEMPORARY')) return Tk.Temp;
  if (isWord(token, 'TRIGGER')) return Tk.Trigger;
  if (isWord(token, 'END')) return Tk.End;
  return Tk.Other;
}

/**
 * Splits of recent texts (issue 7: clients send the same statements over and
 * over, and splitting one tokenizes it whole). The split depends on the text
 * alone; texts that fail are not kept, nor long ones.
 */
const SPLIT_CACHE_SIZE = 512;
const SPLIT_CACHE_MAX_LENGTH = 2048;
const splits = new Map<string, readonly string[]>();

/**
 * The statements of `sql`, each the exact source text from its first token to
 * its last (leading and trailing comments dropped, inner ones kept), without
 * the terminating `;`. Empty statements (`;;`, comment-only) are dropped.
 * Throws SYNTAX_ERROR on an unterminated literal or comment anywhere.
 */
export function splitStatements(sql: string): string[] {
  const known = splits.get(sql);
  if (known !== undefined) return [...known];
  const statements = splitText(sql);
  if (sql.length <= SPLIT_CACHE_MAX_LENGTH) {
    if (splits.size >= SPLIT_CACHE_SIZE) splits.delete(splits.keys().next().value as string);
    splits.set(sql, Object.freeze([...statements]));
  }
  return statements;
}

function splitText(sql: string): string[] {
  const statements: string[] = [];
  let state: State = State.Start;
  let first: Token | undefined;
  let last: Token | undefined;
  for (const token of tokenize(sql)) {
    const ends = token.kind === 'semicolon' && TRANSITIONS[state]?.[Tk.Semi] === State.Start;
    state = TRANSITIONS[state]?.[classOf(token)] ?? State.Normal;
    if (ends) {
      if (first !== undefined && last !== undefined) statements.push(sql.slice(first.start, last.end));
      first = last = undefined;
      continue;
    }
    first ??= token;
    last = token;
  }
  if (first !== undefined && last !== undefined) statements.push(sql.slice(first.start, last.end));
  return statements;
}
