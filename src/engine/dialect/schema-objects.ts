/**
 * CREATE/DROP VIEW and CREATE/DROP TRIGGER: what the classifier reads of
 * them. Only the head is read here (IF [NOT] EXISTS, the object's schema);
 * SQLite checks the rest when the statement is prepared, and the names in the
 * body are checked by internal-names.ts like those of any statement.
 *
 * A view or trigger in the `temp` schema lives on one connection of the
 * engine's pool, where the next request may or may not find it, and replay
 * could not rebuild it; so it is refused as TEMP tables are.
 */
import { EngineError } from '../../errors';
import type { ClassifiedStatement } from './statement';
import { statementSpans } from './statement-spans';
import { isPunct, isWord, nameOf, nearError, skipTableName, type Token } from './tokenize';

export type SchemaObjectKind = Pick<ClassifiedStatement, 'kind' | 'ifExists' | 'ifNotExists'>;

/** CREATE VIEW [IF NOT EXISTS] [schema.]name [(columns)] AS select */
export function classifyCreateView(tokens: readonly Token[]): SchemaObjectKind {
  refuseTempSchema(tokens, 2, 'CREATE TEMP VIEW');
  return { kind: 'create-view', ifNotExists: hasIfNotExists(tokens, 2) };
}

/** CREATE TRIGGER [IF NOT EXISTS] [schema.]name … BEGIN … END */
export function classifyCreateTrigger(tokens: readonly Token[]): SchemaObjectKind {
  refuseTempSchema(tokens, 2, 'CREATE TEMP TRIGGER');
  return { kind: 'create-trigger', ifNotExists: hasIfNotExists(tokens, 2) };
}

/** DROP VIEW [IF EXISTS] [schema.]name, DROP TRIGGER [IF EXISTS] [schema.]name */
export function classifyDropObject(tokens: readonly Token[], kind: 'drop-view' | 'drop-trigger'): SchemaObjectKind {
  const ifExists = isWord(tokens[2], 'IF') && isWord(tokens[3], 'EXISTS');
  const end = skipTableName(tokens, ifExists ? 4 : 2);
  if (end < tokens.length) throw nearError(tokens[end]);
  return { kind, ifExists };
}

/**
 * A trigger's body holds semicolons of its own, so the classifier's "one
 * statement, no semicolon" rule cannot apply to it; instead the one splitter
 * must find exactly one statement in the text, which is what SQLite's shell
 * would run as one (sqlite3_complete's trigger rules).
 */
export function rejectTextAfterTrigger(sql: string, tokens: readonly Token[]): void {
  const spans = statementSpans(sql).statements;
  const second = spans[1];
  if (second === undefined) return;
  throw nearError(tokens.find((token) => token.start >= second.start));
}

function hasIfNotExists(tokens: readonly Token[], at: number): boolean {
  return isWord(tokens[at], 'IF') && isWord(tokens[at + 1], 'NOT') && isWord(tokens[at + 2], 'EXISTS');
}

/** `CREATE VIEW temp.v` is a TEMP view by another name (any quoting or case of `temp`). */
function refuseTempSchema(tokens: readonly Token[], at: number, detail: string): void {
  const end = skipTableName(tokens, at);
  const schema = end >= 3 && isPunct(tokens[end - 2], '.') ? tokens[end - 3] : undefined;
  if (schema !== undefined && ['temp', 'temporary'].includes(nameOf(schema).toLowerCase())) {
    throw new EngineError('UNSUPPORTED_STATEMENT', { detail });
  }
}
