/**
 * A hint for the commonest syntax error of a class: a name with a dash
 * written bare. `DROP TABLE alumno-08` reads to SQLite as `alumno` minus
 * `08`, and all it says is `near "-": syntax error`; students name their
 * tables after their databases (`alumno-08`), which may hold dashes.
 */
import { EngineError } from '../../errors';
import { isPunct, isWord, tokenize, type Token } from './tokenize';

/** Words after which a name comes: a dashed name there is the likeliest culprit. */
const NAME_BEFORE = [
  'TABLE',
  'VIEW',
  'INDEX',
  'TRIGGER',
  'FROM',
  'JOIN',
  'INTO',
  'UPDATE',
  'EXISTS',
  'ON',
  'REFERENCES',
];

/** Tokens written with nothing between them, as `alumno`, `-` and `08` in `alumno-08`. */
function touching(a: Token | undefined, b: Token | undefined): boolean {
  return a !== undefined && b !== undefined && a.end === b.start;
}

/** The run `word-part[-part…]` starting at `i` (a word, then `-` and a word or number, all touching), as its tokens. */
function dashedRun(tokens: readonly Token[], i: number): Token[] {
  const run = [tokens[i] as Token];
  for (let at = i + 1; ; at += 2) {
    const dash = tokens[at];
    const part = tokens[at + 1];
    const joined = isPunct(dash, '-') && touching(run[run.length - 1], dash) && touching(dash, part);
    if (!joined || (part?.kind !== 'word' && part?.kind !== 'number')) return run;
    run.push(dash as Token, part);
  }
}

/** The dashed bare names of a statement, as written (`alumno-08`), each with whether a name is expected where it stands. */
function dashedNames(sql: string): Array<{ text: string; inNamePlace: boolean }> {
  const tokens = tokenize(sql);
  const names: Array<{ text: string; inNamePlace: boolean }> = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]?.kind !== 'word' || isPunct(tokens[i - 1], '-')) continue;
    const run = dashedRun(tokens, i);
    if (run.length === 1) continue;
    const first = run[0] as Token;
    const last = run[run.length - 1] as Token;
    names.push({ text: sql.slice(first.start, last.end), inNamePlace: isWord(tokens[i - 1], ...NAME_BEFORE) });
    i += run.length - 1;
  }
  return names;
}

/** `(a name with "-" must be quoted: "alumno-08")` for the statement, or null when it has no dashed bare name. */
export function quotingHint(sql: string): string | null {
  let names;
  try {
    names = dashedNames(sql);
  } catch {
    return null; // a statement our tokenizer refuses gets no hint; its own error stands
  }
  const name = names.find((candidate) => candidate.inNamePlace) ?? names[0];
  return name === undefined ? null : `(a name with "-" must be quoted: "${name.text}")`;
}

/**
 * The syntax error with the hint appended when SQLite (or our parser)
 * stopped at a `-` and the statement holds a dashed bare name; any other
 * error as it is.
 */
export function withQuotingHint(error: EngineError, sql: string): EngineError {
  if (error.errorName !== 'SYNTAX_ERROR' || !String(error.params.detail ?? '').startsWith('near "-"')) return error;
  const hint = quotingHint(sql);
  if (hint === null) return error;
  return new EngineError(
    'SYNTAX_ERROR',
    { ...error.params, detail: `${String(error.params.detail)} ${hint}` },
    {
      statement: error.statement,
      sqliteCode: error.sqliteCode,
      details: error.details,
      cause: error.cause,
    },
  );
}
