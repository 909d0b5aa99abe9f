/**
 * The server's use of the one splitter (statement-spans.ts): a request's SQL
 * as the texts of its statements, or a syntax error when it leaves a literal
 * or a comment open — text hidden in an unclosed comment is never run.
 */
import { EngineError } from '../../errors';
import { statementSpans } from './statement-spans';

/**
 * Splits of recent texts (clients send the same statements over and over).
 * The split depends on the text alone; texts that fail are not kept, nor
 * long ones.
 */
const SPLIT_CACHE_SIZE = 512;
const SPLIT_CACHE_MAX_LENGTH = 2048;
const splits = new Map<string, readonly string[]>();

/**
 * The statements of `sql`, each the exact source text from its first token to
 * its last (leading and trailing comments dropped, inner ones kept), without
 * the terminating `;`. Empty statements (`;;`, comment-only) are dropped.
 * Throws SYNTAX_ERROR on an unterminated literal or comment anywhere. A
 * leading byte-order mark is ignored.
 */
export function splitStatements(source: string): string[] {
  // A byte-order mark before the first statement is how some editors save UTF-8 (Chinook's script in some versions): it is not SQL.
  const sql = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const known = splits.get(sql);
  if (known !== undefined) return [...known];
  const { statements, unterminated } = statementSpans(sql);
  if (unterminated !== null) throw new EngineError('SYNTAX_ERROR', { detail: `unterminated ${unterminated}` });
  const texts = statements.map((statement) => statement.text);
  if (sql.length <= SPLIT_CACHE_MAX_LENGTH) {
    if (splits.size >= SPLIT_CACHE_SIZE) splits.delete(splits.keys().next().value as string);
    splits.set(sql, Object.freeze([...texts]));
  }
  return texts;
}
