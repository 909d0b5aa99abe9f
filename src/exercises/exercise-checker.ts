/**
 * Runs an answer and the exercise's solution on scratch copies of the
 * template (scratch-copies.ts) and judges the answer (result-compare.ts).
 *
 * An answer passes the checks /exec applies to any batch (the splitter, the
 * classifier's refusals of what reaches outside the database, the statement
 * limit) and runs in an engine process like any batch: stopped at
 * -query-timeout, its result cut at -max-result-rows and -max-result-bytes.
 * It fails as readably as in /exec: its error is the engine's.
 *
 * The solution's result is cached per exercise and template version (the
 * template's file stamp): thirty students checking the same task cost one
 * run of the solution, and a change to the template runs it again.
 */
import { EngineError } from '../errors';
import { databaseLimitBytes } from '../access/principal';
import { newBatchContext } from '../engine/deterministic-functions';
import type { CallContext, ExecStatement, StatementResult } from '../engine/protocol';
import { parseBatch, toExecStatement, type Batch } from '../engine/batch';
import type { DatabaseDirectory, DatabaseRef } from '../services/databases/database-directory';
import type { ExerciseDefinition } from './exercise-definition';
import { compareResults, resultSet, type ResultSet } from './result-compare';
import type { ScratchCopies } from './scratch-copies';
import type { AnswerError, CheckOutcome } from './exercise-types';
import type { EngineHost } from '../engine/protocol';

export interface CheckerLimits {
  readonly maxStatements: number;
  readonly maxResultRows: number;
  readonly maxResultBytes: number;
  /** -max-database-mb: a scratch copy grows no further than a database of the answering token may. */
  readonly maxDatabaseMb?: number;
}

/** Solution results kept at most (one per exercise and template version). */
const CACHED_RESULTS = 256;

/** A failure that is the service's, not the answer's: the client hears it as from any endpoint. */
function isServiceFailure(error: EngineError): boolean {
  return error.status >= 500 || error.errorName === 'CLIENT_CLOSED';
}

/**
 * The answer's error as the student reads it. An error of the check query
 * that follows the answer (the answer renamed or dropped what it reads) is
 * told only as EXERCISE_CHECK_FAILED: SQLite's message would name the
 * check's tables and columns, which the student must not learn from it. The
 * engine's own error stays in the journal's attempt for the teacher.
 */
function answerError(error: EngineError, statements: number): AnswerError {
  const inCheck = error.statement !== undefined && error.statement >= statements;
  const told = inCheck ? new EngineError('EXERCISE_CHECK_FAILED') : error;
  const out: AnswerError = { code: told.code, class: Math.floor(told.code / 1000), message: told.message };
  if (!inCheck && error.statement !== undefined) out.statement = error.statement;
  return out;
}

export class ExerciseChecker {
  private readonly solutions = new Map<string, Promise<ResultSet>>();

  constructor(
    private readonly directory: DatabaseDirectory,
    private readonly engine: EngineHost,
    private readonly copies: ScratchCopies,
    private readonly limits: CheckerLimits,
  ) {}

  /** Parses SQL as /exec would; a database-level statement has no place in an exercise. */
  parse(sql: string): Batch {
    const batch = parseBatch([{ sql }], this.limits.maxStatements);
    if (batch.level === 'database')
      throw new EngineError('EXERCISE_CHECK_INVALID', {
        detail: 'CREATE, DROP and SHOW DATABASE have no place in an exercise: it runs on a copy of its template',
      });
    return batch;
  }

  /** The template's database; a template dropped since the exercise was written is the teacher's to fix. */
  template(exercise: Pick<ExerciseDefinition, 'id' | 'template'>): DatabaseRef {
    try {
      return this.directory.resolve(exercise.template);
    } catch (error) {
      if (error instanceof EngineError && error.errorName === 'NO_SUCH_DATABASE')
        throw new EngineError('EXERCISE_TEMPLATE_GONE', { id: exercise.id, template: exercise.template });
      throw error;
    }
  }

  /**
   * A definition the checker can use: the solution (and the check) parse,
   * read or write as they must, and run on the template without error. The
   * error, when there is one, names what failed.
   */
  async validate(exercise: ExerciseDefinition, call: CallContext): Promise<void> {
    const invalid = (detail: string): EngineError => new EngineError('EXERCISE_INVALID', { detail });
    const solution = this.parseAs(exercise.solution, 'solution');
    if (exercise.check === null && !solution.readonly)
      throw invalid('a solution that changes data needs a "check" query that reads the result');
    if (exercise.check !== null && !this.parseAs(exercise.check, 'check').readonly)
      throw invalid('"check" must only read (SELECT)');
    const template = this.template(exercise);
    try {
      const result = await this.runSolution(exercise, template, call);
      if (result.truncated === true)
        throw invalid("the solution's result is larger than -max-result-rows or -max-result-bytes allow");
    } catch (error) {
      if (error instanceof EngineError && !isServiceFailure(error) && error.errorName !== 'EXERCISE_INVALID')
        throw invalid(
          `the ${exercise.check === null ? 'solution' : 'solution or the check'} fails on ${exercise.template}: ${error.message}`,
        );
      throw error;
    }
  }

  private parseAs(sql: string, field: string): Batch {
    try {
      return this.parse(sql);
    } catch (error) {
      if (error instanceof EngineError)
        throw new EngineError('EXERCISE_INVALID', { detail: `"${field}": ${error.message}` });
      throw error;
    }
  }

  /** Judges one answer. Throws only for what is not the answer's fault (a template gone, engines busy, the service failing). */
  async check(exercise: ExerciseDefinition, sql: string, call: CallContext): Promise<CheckOutcome> {
    const template = this.template(exercise);
    let batch: Batch;
    try {
      batch = this.parse(sql);
    } catch (error) {
      if (error instanceof EngineError)
        return {
          correct: false,
          feedback: { rows: { expected: 0, got: 0 } },
          error: answerError(error, Number.MAX_SAFE_INTEGER),
          failure: error,
        };
      throw error;
    }
    const expected = await this.expected(exercise, template, call);
    const statements = batch.statements.map(toExecStatement);
    const checkStatements = exercise.check === null ? [] : this.parse(exercise.check).statements.map(toExecStatement);
    let got: StatementResult | undefined;
    try {
      got = await this.run(template, [...statements, ...checkStatements], batch.readonly, call);
    } catch (error) {
      if (!(error instanceof EngineError) || isServiceFailure(error)) throw error;
      return {
        correct: false,
        feedback: { rows: { expected: expected.rows.length, got: 0 } },
        error: answerError(error, statements.length),
        failure: error,
      };
    }
    const verdict = compareResults(expected, resultSet(got), exercise);
    if (got.truncated === true) return { correct: false, feedback: { ...verdict.feedback, truncated: true } };
    return verdict;
  }

  /** The solution's result (its check's, for a task that changes data) on the template's current version. */
  private async expected(exercise: ExerciseDefinition, template: DatabaseRef, call: CallContext): Promise<ResultSet> {
    const key = [exercise.id, template.name, exercise.solution, exercise.check ?? '', exercise.tolerance].join('\0');
    // The stamp is part of the key through the copy the solution ran on; look for a result of the current one.
    const lease = await this.copies.readCopy(template);
    const stamped = `${key}\0${lease.stamp}`;
    lease.release();
    const cached = this.solutions.get(stamped);
    if (cached !== undefined) return cached;
    // Not stopped with the student's request: other checks may be waiting for the same result.
    const own: CallContext = call.client === undefined ? {} : { client: call.client };
    const running = this.runSolution(exercise, template, own).then(
      (result) => resultSet(result),
      (error: unknown) => {
        this.solutions.delete(stamped);
        if (error instanceof EngineError && !isServiceFailure(error))
          throw new EngineError(
            'EXERCISE_SOLUTION_FAILED',
            { id: exercise.id, template: exercise.template },
            { cause: error },
          );
        throw error;
      },
    );
    this.solutions.set(stamped, running);
    if (this.solutions.size > CACHED_RESULTS) this.solutions.delete(this.solutions.keys().next().value as string);
    return running;
  }

  private runSolution(
    exercise: ExerciseDefinition,
    template: DatabaseRef,
    call: CallContext,
  ): Promise<StatementResult> {
    const solution = this.parse(exercise.solution);
    const check = exercise.check === null ? [] : this.parse(exercise.check).statements;
    return this.run(template, [...solution.statements, ...check].map(toExecStatement), solution.readonly, call);
  }

  /** Runs statements on a copy of the template; the last statement's result. */
  private async run(
    template: DatabaseRef,
    statements: readonly ExecStatement[],
    readonly: boolean,
    call: CallContext,
  ): Promise<StatementResult> {
    const lease = readonly ? await this.copies.readCopy(template) : await this.copies.writeCopy(template);
    try {
      const results = await this.engine.exec(
        {
          file: lease.file,
          statements,
          maxResultRows: this.limits.maxResultRows,
          maxResultBytes: this.limits.maxResultBytes,
          context: newBatchContext(),
          jsonRows: false,
          maxDatabaseBytes: databaseLimitBytes(call.principal, this.limits.maxDatabaseMb),
          // A BLOB and the TEXT of its base64 are told apart (result-compare.ts).
          markBlobs: true,
        },
        call,
      );
      return results.at(-1) ?? { columns: [], rows: [] };
    } finally {
      lease.release();
    }
  }
}
