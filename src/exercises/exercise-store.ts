/**
 * Exercises live in a database of the service's own, `_sqlscribe_exercises.db`,
 * beside the pilot records' and like them changed only through journaled
 * batches: replay, crash recovery, replicas, snapshot rounds and restores
 * carry the exercises with everything else, and no journal entry kind or
 * state file of their own is needed. Clients cannot name the database (the
 * `_sqlscribe` prefix), so no /exec, /rows or history shows a solution.
 *
 * Reads are served from memory while the database's file stamp (file-stamp.ts)
 * is unchanged: thirty students polling GET /exercises cost no engine call,
 * and a replica sees its primary's changes as soon as its file moves.
 */
import type { Principal } from '../access/principal';
import { EXERCISES_DATABASE } from '../database-names';
import { EngineError } from '../errors';
import type { StatementKind } from '../engine/dialect/statement';
import type { EngineHost, ExecStatement, ResultValue, SqlValue } from '../engine/protocol';
import type { BatchRunner } from '../services/writes/batch-runner';
import type { DatabaseDirectory, DatabaseRef } from '../services/databases/database-directory';
import type { DatabaseLifecycle } from '../services/databases/database-lifecycle';
import { lessonOrder, type ExerciseDefinition, type StoredExercise } from './exercise-definition';
import { databaseStamp } from './file-stamp';

export { EXERCISES_DATABASE };

const CREATE_TABLE = `CREATE TABLE exercises (
  id TEXT PRIMARY KEY,
  set_name TEXT NOT NULL,
  position INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  updated TEXT NOT NULL,
  definition TEXT NOT NULL
)`;

const NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
/** More exercises than any school writes; a read never comes back cut. */
const MAX_ROWS = 1_000_000;

function statement(sql: string, kind: StatementKind, params?: SqlValue[]): ExecStatement {
  return params === undefined ? { sql, kind } : { sql, kind, params };
}

function toStored(row: ResultValue[]): StoredExercise {
  const [revision, updated, definition] = row;
  return {
    ...(JSON.parse(String(definition)) as ExerciseDefinition),
    revision: Number(revision),
    updated: String(updated),
  };
}

export class ExerciseStore {
  private ready: Promise<void> | undefined;
  private readonly ref: DatabaseRef;
  private cached: { stamp: string; exercises: ReadonlyMap<string, StoredExercise> } | null = null;

  constructor(
    directory: DatabaseDirectory,
    private readonly engine: EngineHost,
    private readonly batches: BatchRunner,
    private readonly lifecycle: DatabaseLifecycle,
  ) {
    this.ref = directory.refOf(EXERCISES_DATABASE);
  }

  /** The database and its table, made on the first write (and journaled like any other). */
  private ensure(): Promise<void> {
    this.ready ??= (async () => {
      await this.lifecycle.create(EXERCISES_DATABASE, true, null);
      const [result] = await this.engine.exec({
        file: this.ref.file,
        statements: [statement("SELECT count(*) FROM sqlite_schema WHERE name = 'exercises'", 'select')],
        maxResultRows: 1,
      });
      if (Number(result?.rows[0]?.[0]) === 0)
        await this.batches.run(this.ref, [statement(CREATE_TABLE, 'create-table')], false);
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** Every exercise by id, read again only when the database changed. */
  async all(): Promise<ReadonlyMap<string, StoredExercise>> {
    const stamp = databaseStamp(this.ref.file);
    if (this.cached !== null && this.cached.stamp === stamp) return this.cached.exercises;
    const exercises = new Map<string, StoredExercise>();
    if (stamp !== '-') {
      const [tables] = await this.engine.exec({
        file: this.ref.file,
        statements: [statement("SELECT count(*) FROM sqlite_schema WHERE name = 'exercises'", 'select')],
        maxResultRows: 1,
      });
      if (Number(tables?.rows[0]?.[0]) > 0) {
        const [result] = await this.engine.exec({
          file: this.ref.file,
          statements: [statement('SELECT revision, updated, definition FROM exercises', 'select')],
          maxResultRows: MAX_ROWS,
        });
        for (const row of result?.rows ?? []) {
          const exercise = toStored(row);
          exercises.set(exercise.id, exercise);
        }
      }
    }
    // The stamp read before the rows: a change meanwhile makes the next read look again.
    this.cached = { stamp, exercises };
    return exercises;
  }

  async list(set?: string): Promise<StoredExercise[]> {
    const all = [...(await this.all()).values()];
    return (set === undefined ? all : all.filter((exercise) => exercise.set === set)).sort(lessonOrder);
  }

  async get(id: string): Promise<StoredExercise> {
    const found = (await this.all()).get(id);
    if (found === undefined) throw new EngineError('EXERCISE_NOT_FOUND', { id });
    return found;
  }

  /** Where a new exercise of `set` goes when it names no position: after the last one. */
  async nextPosition(set: string): Promise<number> {
    const positions = (await this.list(set)).map((exercise) => exercise.position);
    return positions.length === 0 ? 1 : Math.max(...positions) + 1;
  }

  async insert(definition: ExerciseDefinition, by?: Principal): Promise<StoredExercise> {
    await this.ensure();
    const insert = statement(
      `INSERT INTO exercises (id, set_name, position, revision, updated, definition) VALUES (?, ?, ?, 1, ${NOW}, ?) ON CONFLICT (id) DO NOTHING RETURNING revision, updated, definition`,
      'insert',
      [definition.id, definition.set, definition.position, JSON.stringify(definition)],
    );
    const row = await this.write(insert, by);
    if (row === undefined) throw new EngineError('EXERCISE_EXISTS', { id: definition.id });
    return toStored(row);
  }

  async replace(definition: ExerciseDefinition, by?: Principal): Promise<StoredExercise> {
    await this.ensure();
    const update = statement(
      `UPDATE exercises SET set_name = ?, position = ?, revision = revision + 1, updated = ${NOW}, definition = ? WHERE id = ? RETURNING revision, updated, definition`,
      'update',
      [definition.set, definition.position, JSON.stringify(definition), definition.id],
    );
    const row = await this.write(update, by);
    if (row === undefined) throw new EngineError('EXERCISE_NOT_FOUND', { id: definition.id });
    return toStored(row);
  }

  async remove(id: string, by?: Principal): Promise<void> {
    if (!(await this.all()).has(id)) throw new EngineError('EXERCISE_NOT_FOUND', { id });
    await this.ensure();
    const row = await this.write(
      statement('DELETE FROM exercises WHERE id = ? RETURNING revision, updated, definition', 'delete', [id]),
      by,
    );
    if (row === undefined) throw new EngineError('EXERCISE_NOT_FOUND', { id });
  }

  private async write(query: ExecStatement, by: Principal | undefined): Promise<ResultValue[] | undefined> {
    const [result] = await this.batches.run(
      this.ref,
      [query],
      false,
      by === undefined ? {} : { call: { principal: by } },
    );
    this.cached = null;
    return result?.rows[0];
  }
}
