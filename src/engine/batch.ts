/**
 * Turns the SQL of a request into a checked batch: split into statements,
 * each classified, the batch's level decided, the limits applied. Below the
 * bus, so that /exec parses a batch once, before it is dispatched, and the
 * exercise checker parses answers with the same rules.
 */
import { EngineError } from '../errors';
import { classifyStatement } from './dialect/classify';
import { splitRequestStatements } from './dialect/split';
import type { ClassifiedStatement } from './dialect/statement';
import type { ExecStatement, SqlParams } from './protocol';

/** One piece of SQL from a request, with its parameters if any. */
export interface SqlSource {
  readonly sql: string;
  readonly params?: SqlParams;
}

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

/** One source's statements; a refusal names its statement's index in the whole batch (`before` statements come first). */
function splitOne(sql: string, before: number): string[] {
  try {
    return splitRequestStatements(sql);
  } catch (error) {
    if (error instanceof EngineError && error.statement !== undefined) error.statement += before;
    throw error;
  }
}

/** Splits each source into single statements; parameters stay with their one statement. */
function splitSources(sources: readonly SqlSource[]): SqlSource[] {
  const texts: SqlSource[] = [];
  for (const source of sources) {
    const parts = splitOne(source.sql, texts.length);
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
  if (texts.length > maxStatements)
    throw new EngineError('TOO_MANY_STATEMENTS', { count: texts.length, max: maxStatements });
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

/**
 * SQL that could not be parsed into a batch (a syntax error, a forbidden
 * statement, too many statements). It travels to the handler with its
 * command instead of being thrown at once, so that the token is checked
 * first and the failure is journaled like any failed batch.
 */
export interface RefusedBatch {
  readonly refused: EngineError;
}

/** parseBatch, with the refusal of SQL that cannot run kept as a value. */
export function parseOrRefuse(sources: readonly SqlSource[], maxStatements: number): Batch | RefusedBatch {
  try {
    return parseBatch(sources, maxStatements);
  } catch (error) {
    if (error instanceof EngineError) return { refused: error };
    throw error;
  }
}

export function isRefused(batch: Batch | RefusedBatch): batch is RefusedBatch {
  return 'refused' in batch;
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
