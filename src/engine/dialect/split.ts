/**
 * The server's use of the one splitter (statement-spans.ts): a request's SQL
 * as the texts of its statements, or a syntax error when it leaves a literal
 * or a comment open — text hidden in an unclosed comment is never run.
 */
import { EngineError } from '../../errors';
import { statementSpans } from './statement-spans';

/**
 * The deepest parenthesis nesting a statement from a request may have.
 * SQLite nests an expression at most 1000 deep (SQLITE_MAX_EXPR_DEPTH) and
 * refuses plain parentheses past about 2500 anyway, but only after the
 * server's tokenizer has read every one of them: 500 KB of `(` held the
 * server's thread for 0.15 s a request. One scan of the splitter refuses it
 * first.
 */
export const MAX_PAREN_DEPTH = 1000;

interface SplitText {
  readonly texts: readonly string[];
  /** The deepest nesting of any of its statements, and which one that is. */
  readonly depth: number;
  readonly deepestAt: number;
}

/**
 * Splits of recent texts (clients send the same statements over and over).
 * The split depends on the text alone; texts that fail are not kept, nor
 * long ones.
 */
const SPLIT_CACHE_SIZE = 512;
const SPLIT_CACHE_MAX_LENGTH = 2048;
const splits = new Map<string, SplitText>();

function split(source: string): SplitText {
  // A byte-order mark before the first statement is how some editors save UTF-8 (Chinook's script in some versions): it is not SQL.
  const sql = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const known = splits.get(sql);
  if (known !== undefined) return known;
  const { statements, unterminated } = statementSpans(sql);
  if (unterminated !== null) throw new EngineError('SYNTAX_ERROR', { detail: `unterminated ${unterminated}` });
  let depth = 0;
  let deepestAt = 0;
  statements.forEach((statement, index) => {
    if (statement.depth > depth) [depth, deepestAt] = [statement.depth, index];
  });
  const result: SplitText = { texts: Object.freeze(statements.map((statement) => statement.text)), depth, deepestAt };
  if (sql.length <= SPLIT_CACHE_MAX_LENGTH) {
    if (splits.size >= SPLIT_CACHE_SIZE) splits.delete(splits.keys().next().value as string);
    splits.set(sql, result);
  }
  return result;
}

/**
 * The statements of `sql`, each the exact source text from its first token to
 * its last (leading and trailing comments dropped, inner ones kept), without
 * the terminating `;`. Empty statements (`;;`, comment-only) are dropped.
 * Throws SYNTAX_ERROR on an unterminated literal or comment anywhere. A
 * leading byte-order mark is ignored.
 */
export function splitStatements(source: string): string[] {
  return [...split(source).texts];
}

/**
 * splitStatements for SQL a client sent to run: also throws SQL_TOO_COMPLEX
 * (with the statement's index among these texts) when a statement nests its
 * parentheses deeper than MAX_PAREN_DEPTH, before anything tokenizes it.
 */
export function splitRequestStatements(source: string): string[] {
  const { texts, depth, deepestAt } = split(source);
  if (depth > MAX_PAREN_DEPTH)
    throw new EngineError(
      'SQL_TOO_COMPLEX',
      { detail: `parentheses nested ${depth} deep (at most ${MAX_PAREN_DEPTH})` },
      { statement: deepestAt },
    );
  return [...texts];
}
