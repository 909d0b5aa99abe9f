/**
 * Turns the SQL of a request into a checked batch: split into statements,
 * each classified, the batch's level decided, the limits applied.
 */
import { EngineError } from '../errors';
import { classifyStatement } from '../engine/dialect/classify';
import { splitStatements } from '../engine/dialect/split';
import type { ClassifiedStatement } from '../engine/dialect/statement';
import type { ExecStatement, SqlParams } from '../engine/protocol';
import type { SqlSource } from './commands';

export interface ParsedStatement {
  readonly statement: ClassifiedStatement;
  readonly params?: SqlParams;
}

export interface Batch {
  readonly level: 'database' | 'table';
  /** Every statement only reads. */
  readonly readonly: boolean;
  readonly statements: readonly ParsedStatement[];
}

/** Splits each source into single statements; parameters stay with their one statement. */
function splitSources(sources: readonly SqlSource[]): SqlSource[] {
  const texts: SqlSource[] = [];
  for (const source of sources) {
    const parts = splitStatements(source.sql);
    if (source.params !== undefined && parts.length > 1) {
      throw new EngineError('BAD_REQUEST', { detail: 'a "sql" that has parameters must hold exactly one statement' });
    }
    for (const sql of parts) texts.push(source.params === undefined ? { sql } : { sql, params: source.params });
  }
  return texts;
}

export function parseBatch(sources: readonly SqlSource[], maxStatements: number): Batch {
  const texts = splitSources(sources);
  if (texts.length === 0) throw new EngineError('EMPTY_SQL');
  if (texts.length > maxStatements) throw new EngineError('TOO_MANY_STATEMENTS', { count: texts.length, max: maxStatements });
  const statements = texts.map((text, index): ParsedStatement => {
    try {
      const statement = classifyStatement(text.sql);
      return text.params === undefined ? { statement } : { statement, params: text.params };
    } catch (error) {
      if (error instanceof EngineError) error.statement = index;
      throw error;
    }
  });
  const levels = new Set(statements.map(({ statement }) => statement.level));
  if (levels.size > 1) throw new EngineError('MIXED_BATCH');
  const readonly = statements.every(({ statement }) => statement.readonly);
  return { level: levels.has('database') ? 'database' : 'table', readonly, statements };
}

/** A parsed statement as the engine takes it: its text, kind, parameters and savepoint name. */
export function toExecStatement({ statement, params }: ParsedStatement): ExecStatement {
  return {
    sql: statement.sql,
    kind: statement.kind,
    ...(params === undefined ? {} : { params }),
    ...(statement.savepoint === undefined ? {} : { savepoint: statement.savepoint }),
  };
}
