/**
 * Where each statement of a script begins and ends: the one SQL splitter of
 * sqlscribe. The server splits every request with it, and the web console
 * loads the same code, built as a browser module (tsconfig.console.json), to
 * mark the statement an error names. It imports nothing, so that both can.
 *
 * A statement ends at a top-level semicolon: never one inside a string, a
 * quoted name or a comment, nor inside `CREATE [TEMP] TRIGGER … END`, where
 * the state machine is the one of sqlite3_complete()
 * (https://sqlite.org/src/file/src/complete.c), so a statement ends exactly
 * where SQLite's shell would end it. Only what decides that is read here —
 * quotes, comments, semicolons and a handful of words; every other check is
 * the tokenizer's, which reads each statement when it is classified.
 */

export interface StatementSpan {
  /** Offsets in the script: from the statement's first token to the end of its last, without the `;`. */
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /**
   * How deep its parentheses nest (outside strings, quoted names and
   * comments): the server refuses a statement nested past its bound before
   * tokenizing it, as tokens cost far more than this one scan.
   */
  readonly depth: number;
}

/** What the script leaves open at its end, if anything (the server refuses it as a syntax error). */
export type Unterminated = 'comment' | 'string literal' | 'quoted identifier' | 'blob literal';

export interface ScriptSplit {
  /** Empty statements (`;;`, comment only) are left out. */
  readonly statements: StatementSpan[];
  readonly unterminated: Unterminated | null;
}

/** The token classes of sqlite3_complete(). Whitespace and comments never reach the machine. */
const Tk = { Semi: 0, Other: 1, Explain: 2, Create: 3, Temp: 4, Trigger: 5, End: 6 } as const;
type Tk = (typeof Tk)[keyof typeof Tk];

/** The states of sqlite3_complete() that matter once whitespace is gone. */
const State = { Start: 0, Normal: 1, Explain: 2, Create: 3, Trigger: 4, Semi: 5, End: 6 } as const;
type State = (typeof State)[keyof typeof State];

/** TRANSITIONS[state][token] → next state; a Semi token in Start, Normal, Explain, Create or End ends the statement. */
const TRANSITIONS: readonly (readonly State[])[] = [
  /* Start   */ [State.Start, State.Normal, State.Explain, State.Create, State.Normal, State.Normal, State.Normal],
  /* Normal  */ [State.Start, State.Normal, State.Normal, State.Normal, State.Normal, State.Normal, State.Normal],
  /* Explain */ [State.Start, State.Explain, State.Normal, State.Create, State.Normal, State.Normal, State.Normal],
  /* Create  */ [State.Start, State.Normal, State.Normal, State.Normal, State.Create, State.Trigger, State.Normal],
  /* Trigger */ [State.Semi, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger],
  /* Semi    */ [State.Semi, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.End],
  /* End     */ [State.Start, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger, State.Trigger],
];

const WORD_CLASSES: ReadonlyMap<string, Tk> = new Map<string, Tk>([
  ['EXPLAIN', Tk.Explain],
  ['CREATE', Tk.Create],
  ['TEMP', Tk.Temp],
  ['TEMPORARY', Tk.Temp],
  ['TRIGGER', Tk.Trigger],
  ['END', Tk.End],
]);

/** Letters, digits, `_`, `$` and everything beyond ASCII: SQLite's identifier characters. */
function isWordCode(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x24 ||
    code > 0x7f
  );
}

function isSpaceCode(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;
}

/** The end of the literal opened at `pos` by `quote` (a doubled quote stands for one), or -1 when it never closes. */
function closeQuote(sql: string, pos: number, quote: string): number {
  let i = pos + 1;
  for (;;) {
    const close = sql.indexOf(quote, i);
    if (close === -1) return -1;
    if (sql[close + 1] !== quote) return close + 1;
    i = close + 2;
  }
}

/** The statements of `sql`, and what it leaves open at its end. */
export function statementSpans(sql: string): ScriptSplit {
  const statements: StatementSpan[] = [];
  let state: State = State.Start;
  let first = -1;
  let last = -1;
  let depth = 0;
  let deepest = 0;
  const endStatement = (): void => {
    if (first !== -1) statements.push({ start: first, end: last, text: sql.slice(first, last), depth: deepest });
    first = last = -1;
    depth = deepest = 0;
  };
  const token = (start: number, end: number, tk: Tk): void => {
    const ends = tk === Tk.Semi && TRANSITIONS[state]?.[Tk.Semi] === State.Start;
    state = TRANSITIONS[state]?.[tk] ?? State.Normal;
    if (ends) return endStatement();
    if (first === -1) first = start;
    last = end;
  };
  const open = (what: Unterminated, at: number): ScriptSplit => {
    token(at, sql.length, Tk.Other);
    endStatement();
    return { statements, unterminated: what };
  };

  let i = 0;
  while (i < sql.length) {
    const code = sql.charCodeAt(i);
    const c = sql[i] as string;
    if (isSpaceCode(code)) {
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i + 2);
      i = newline === -1 ? sql.length : newline + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      // What came before an unclosed comment is the last statement; the comment belongs to none.
      if (close === -1) {
        endStatement();
        return { statements, unterminated: 'comment' };
      }
      i = close + 2;
    } else if (c === ';') {
      token(i, i + 1, Tk.Semi);
      i++;
    } else if ((c === 'x' || c === 'X') && sql[i + 1] === "'") {
      const end = closeQuote(sql, i + 1, "'");
      if (end === -1) return open('blob literal', i);
      token(i, end, Tk.Other);
      i = end;
    } else if (c === "'" || c === '"' || c === '`') {
      const end = closeQuote(sql, i, c);
      if (end === -1) return open(c === "'" ? 'string literal' : 'quoted identifier', i);
      token(i, end, Tk.Other);
      i = end;
    } else if (c === '[') {
      const close = sql.indexOf(']', i + 1);
      if (close === -1) return open('quoted identifier', i);
      token(i, close + 1, Tk.Other);
      i = close + 1;
    } else if (isWordCode(code)) {
      // Words, numbers and the names of parameters alike: only the six words of the machine matter.
      let end = i + 1;
      while (end < sql.length && isWordCode(sql.charCodeAt(end))) end++;
      const tk = end - i <= 9 ? (WORD_CLASSES.get(sql.slice(i, end).toUpperCase()) ?? Tk.Other) : Tk.Other;
      token(i, end, tk);
      i = end;
    } else {
      // A stray `)` is SQLite's syntax error to report; it never makes the depth negative here.
      if (c === '(') deepest = Math.max(deepest, ++depth);
      else if (c === ')' && depth > 0) depth--;
      token(i, i + 1, Tk.Other);
      i++;
    }
  }
  endStatement();
  return { statements, unterminated: null };
}
