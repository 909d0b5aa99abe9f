/**
 * A whole .sql script as the statements an import runs: split by the one
 * splitter, each classified like an /exec statement, with no cap on their
 * number. The import is one transaction, so a script's own BEGIN (as its first
 * statement) and COMMIT or END (as its last) — what dump tools write around
 * their output — are skipped; any other transaction control is refused. The
 * `PRAGMA foreign_keys=OFF;` that sqlite3's .dump writes before its BEGIN is
 * skipped too (foreign keys stay enforced: a dump that inserts children
 * before their parents fails, naming the statement), since refusing it would
 * refuse every such dump.
 */
import { EngineError } from '../../errors';
import { classifyStatement } from '../dialect/classify';
import type { ClassifiedStatement } from '../dialect/statement';
import type { ExecStatement } from '../protocol';

export interface ImportScript {
  statements: ExecStatement[];
  /** The script's index of statements[0]: 1 when a leading BEGIN was skipped, so that errors name the statement as the script counts it. */
  offset: number;
}

function isWrapper(sql: string, words: readonly string[]): boolean {
  const first = /^[A-Za-z]+/.exec(sql)?.[0]?.toUpperCase() ?? '';
  return words.includes(first);
}

function classifyAt(sql: string, index: number): ClassifiedStatement {
  try {
    const statement = classifyStatement(sql);
    if (statement.level === 'database')
      throw new EngineError('UNSUPPORTED_STATEMENT', {
        detail: `${sql.split(/\s+/).slice(0, 2).join(' ').toUpperCase()} inside an import (it acts on the data directory, not on the database)`,
      });
    return statement;
  } catch (error) {
    const engineError =
      error instanceof EngineError && error.errorName === 'TRANSACTION_CONTROL'
        ? new EngineError('IMPORT_TRANSACTION_CONTROL', {
            detail: String(error.params.detail ?? 'transaction control'),
          })
        : error;
    if (engineError instanceof EngineError) engineError.statement = index;
    throw engineError;
  }
}

const DUMP_PREAMBLE = /^PRAGMA\s+foreign_keys\s*=\s*(OFF|0|FALSE|NO)$/i;

export function importScript(texts: readonly string[]): ImportScript {
  let from = 0;
  let to = texts.length;
  if (to > 0 && DUMP_PREAMBLE.test(texts[0] as string)) from = 1;
  if (to > from && isWrapper(texts[from] as string, ['BEGIN'])) from += 1;
  if (to > from && isWrapper(texts[to - 1] as string, ['COMMIT', 'END'])) to -= 1;
  const statements: ExecStatement[] = [];
  for (let index = from; index < to; index++) {
    const sql = texts[index] as string;
    const { kind, savepoint } = classifyAt(sql, index);
    statements.push(savepoint === undefined ? { sql, kind } : { sql, kind, savepoint });
  }
  if (statements.length === 0) throw new EngineError('EMPTY_SQL');
  return { statements, offset: from };
}
