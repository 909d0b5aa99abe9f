/**
 * Exercises as the command bus sees them: defined and changed by an admin
 * (checked by running the solution before anything is stored), listed for
 * every token without what only an admin may see, answers checked and each
 * check journaled as an `attempt`, and the class's progress and evidence.
 *
 * Who sees the solution is decided here, for every answer that carries an
 * exercise, so that no route can show it by mistake: an admin token (or a
 * server without tokens, where nobody is told apart) gets the whole
 * definition; every other token gets publicView.
 */
import { hasRole, matchesPattern, stampOf, type Principal } from '../access/principal';
import type { Clock } from '../clock';
import { EngineError, errorClass } from '../errors';
import type { CallContext } from '../engine/protocol';
import type { TableSchema } from '../engine/schema/schema';
import type { EngineHost } from '../engine/protocol';
import type { JournalEvent } from '../../journal/journal';
import type { NewEntry } from '../../journal/writer';
import type { TokenRegistry } from '../tokens/token-registry';
import {
  exerciseName,
  publicView,
  readDefinition,
  type ExerciseDefinition,
  type StoredExercise,
} from './exercise-definition';
import type { ExerciseChecker } from './exercise-checker';
import type {
  CheckOutcome,
  ClassQuery,
  ClassRow,
  EvidenceReport,
  ExerciseView,
  OwnProgress,
  ProgressReport,
  StudentsShown,
} from './exercise-types';
import { evidenceCounts, readThresholds } from './exercise-evidence';
import type { ExerciseProgress, Student, StudentProgress, StuckRule } from './exercise-progress';
import type { ExerciseStore } from './exercise-store';

/** What the service needs of the journal: a note that never throws, and whether attempts are recorded. */
export interface AttemptJournal {
  note(event: JournalEvent, entry: NewEntry): Promise<void>;
  records(event: JournalEvent, ok: boolean): boolean;
}

export interface ExerciseServiceDeps {
  readonly store: ExerciseStore;
  readonly checker: ExerciseChecker;
  readonly progress: ExerciseProgress;
  readonly journal: AttemptJournal;
  readonly tokens: TokenRegistry;
  readonly engine: EngineHost;
  readonly clock: Clock;
  /**
   * A server without tokens shows solutions and checks to whoever reaches it
   * only as it shows the journal, whose entries carry them: with -journal-feed
   * (options.ts, servesJournalContents).
   */
  readonly solutionsWithoutTokens: boolean;
}

/** An admin, or anyone on a server without tokens that serves the journal's contents: the whole definition. */
function seesSolutions(principal: Principal | undefined, withoutTokens: boolean): boolean {
  return principal === undefined ? withoutTokens : hasRole(principal, 'admin');
}

export function viewFor(
  exercise: StoredExercise,
  principal: Principal | undefined,
  solutionsWithoutTokens: boolean,
): ExerciseView {
  return seesSolutions(principal, solutionsWithoutTokens) ? exercise : publicView(exercise);
}

export class ExerciseService {
  constructor(private readonly deps: ExerciseServiceDeps) {}

  async create(body: unknown, call: CallContext): Promise<StoredExercise> {
    const definition = await this.definitionOf(body);
    if ((await this.deps.store.all()).has(definition.id))
      throw new EngineError('EXERCISE_EXISTS', { id: definition.id });
    await this.deps.checker.validate(definition, call);
    return this.deps.store.insert(definition, call.principal);
  }

  async replace(id: unknown, body: unknown, call: CallContext): Promise<StoredExercise> {
    const existing = await this.deps.store.get(this.idOf(id));
    const definition = await this.definitionOf(body, existing.id);
    await this.deps.checker.validate(definition, call);
    return this.deps.store.replace(definition, call.principal);
  }

  async remove(id: unknown, call: CallContext): Promise<{ id: string }> {
    const name = this.idOf(id);
    await this.deps.store.remove(name, call.principal);
    return { id: name };
  }

  async list(set: unknown, principal: Principal | undefined): Promise<ExerciseView[]> {
    const exercises = await this.deps.store.list(set === undefined ? undefined : this.setOf(set));
    return exercises.map((exercise) => viewFor(exercise, principal, this.deps.solutionsWithoutTokens));
  }

  async get(id: unknown, principal: Principal | undefined): Promise<ExerciseView> {
    return viewFor(await this.deps.store.get(this.idOf(id)), principal, this.deps.solutionsWithoutTokens);
  }

  /** The template's tables, for an editor's completion: a student may not read the template itself. */
  async tables(id: unknown): Promise<{ id: string; template: string; tables: TableSchema[] }> {
    const exercise = await this.deps.store.get(this.idOf(id));
    const template = this.deps.checker.template(exercise);
    return { id: exercise.id, template: exercise.template, tables: await this.deps.engine.tables(template.file) };
  }

  /** Judges one answer and journals it as an attempt. */
  async check(id: unknown, body: unknown, call: CallContext): Promise<CheckOutcome & { exercise: string }> {
    const exercise = await this.deps.store.get(this.idOf(id));
    const sql = sqlOf(body);
    const started = performance.now();
    const outcome = await this.deps.checker.check(exercise, sql, call);
    await this.recordAttempt(exercise, sql, outcome, performance.now() - started, call.principal);
    // The engine error itself is for the journal; the answer carries its readable form (outcome.error).
    return {
      exercise: exercise.id,
      correct: outcome.correct,
      feedback: outcome.feedback,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    };
  }

  private async recordAttempt(
    exercise: StoredExercise,
    sql: string,
    outcome: CheckOutcome,
    ms: number,
    principal: Principal | undefined,
  ): Promise<void> {
    const failure = outcome.failure;
    const entry: NewEntry = {
      db: null,
      session: null,
      kind: 'attempt',
      sql,
      exercise: exercise.id,
      correct: outcome.correct,
      ok: failure === undefined,
      ms: Math.round(ms * 1000) / 1000,
      ...stampOf(principal),
      ...(failure === undefined ? {} : { code: failure.code, class: errorClass(failure.code), error: failure.message }),
    };
    if (this.deps.journal.records('attempt', entry.ok)) await this.deps.journal.note('attempt', entry);
    else
      this.deps.progress.noteUnjournaled({
        ts: new Date(this.deps.clock.now()).toISOString(),
        exercise: exercise.id,
        correct: outcome.correct,
        ...stampOf(principal),
        ...(entry.class === undefined ? {} : { class: entry.class }),
      });
  }

  async progress(query: ClassQuery): Promise<ProgressReport> {
    const exercises = await this.deps.store.list(query.set === undefined ? undefined : this.setOf(query.set));
    const at = query.at ?? this.deps.clock.now();
    const students = await this.students(query.tokens, query.students ?? 'current');
    const grid = await this.deps.progress.grid(
      students.map((chosen) => chosen.student),
      exercises,
      query.stuck,
      at,
    );
    return {
      set: query.set ?? null,
      at: new Date(at).toISOString(),
      stuck: query.stuck,
      exercises: exercises.map(({ id, set, position, title }) => ({ id, set, position, title })),
      students: grid.map((row, index): ClassRow => ({ ...row, former: students[index]?.former ?? false })),
    };
  }

  /** The asking token's own row of the grid: what a student's console marks as solved. */
  async mine(set: unknown, principal: Principal | undefined, stuck: StuckRule): Promise<OwnProgress> {
    const exercises = await this.deps.store.list(set === undefined ? undefined : this.setOf(set));
    // The token itself, by its id: a former token of the same name is another student.
    const student: Student =
      principal === undefined ? { id: null, name: 'anonymous' } : { id: principal.id, name: principal.name };
    const [row] = await this.deps.progress.grid([student], exercises, stuck);
    return { set: set === undefined ? null : this.setOf(set), ...(row as StudentProgress) };
  }

  async evidence(query: ClassQuery, raw: Parameters<typeof readThresholds>[0]): Promise<EvidenceReport> {
    if (query.set === undefined)
      throw new EngineError('INVALID_QUERY_PARAMETER', {
        name: 'set',
        detail: 'required: the evidence is of one lesson',
      });
    const set = this.setOf(query.set);
    const exercises = await this.deps.store.list(set);
    if (exercises.length === 0)
      throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'set', detail: `no exercise belongs to set ${set}` });
    const thresholds = readThresholds(raw, exercises.length);
    const students = await this.students(query.tokens, query.students ?? 'current');
    const grid = await this.deps.progress.grid(
      students.map((chosen) => chosen.student),
      exercises,
      query.stuck,
    );
    return {
      set,
      exercises: exercises.length,
      students: grid.length,
      thresholds,
      aggregate_evidence: evidenceCounts(
        grid.map((row) => row.solved),
        thresholds,
      ),
    };
  }

  /**
   * The students (those whose names match the pattern, if one is given):
   * every token of the server's but the admins, and whoever has attempted
   * without a token on a server that has none. With `all`, also the former
   * students: tokens that attempted and are the server's no longer (revoked),
   * and on a server with tokens, attempts that carry no token id. Current
   * students first, then former ones, each by name.
   */
  private async students(pattern: string | undefined, shown: StudentsShown): Promise<ChosenStudent[]> {
    const tokens = this.deps.tokens.list();
    const known = new Set(tokens.map((token) => token.id));
    const current = new Map<string, ChosenStudent>();
    for (const token of tokens)
      if (token.role !== 'admin') current.set(token.id, { student: { id: token.id, name: token.name }, former: false });
    const former: ChosenStudent[] = [];
    for (const student of await this.deps.progress.attempters()) {
      if (student.name === 'admin' || student.id === 'admin') continue;
      if (student.id !== null && current.has(student.id)) continue;
      // An admin's token that answered is still the server's: a current row, as it always was.
      const isFormer = student.id === null ? this.deps.tokens.enabled : !known.has(student.id);
      if (isFormer && shown === 'current') continue;
      if (isFormer) former.push({ student, former: true });
      else current.set(student.id ?? `name:${student.name}`, { student, former: false });
    }
    const matches = (chosen: ChosenStudent): boolean =>
      pattern === undefined || matchesPattern(pattern.toLowerCase(), chosen.student.name);
    const byName = (a: ChosenStudent, b: ChosenStudent): number =>
      a.student.name.localeCompare(b.student.name) || (a.student.id ?? '').localeCompare(b.student.id ?? '');
    return [...[...current.values()].sort(byName), ...former.sort(byName)].filter(matches);
  }

  private async definitionOf(body: unknown, pathId?: string): Promise<ExerciseDefinition> {
    const set = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).set : undefined;
    const next =
      typeof set === 'string' ? await this.deps.store.nextPosition(set.trim().toLowerCase()).catch(() => 1) : 1;
    return readDefinition(body, () => next, pathId);
  }

  private idOf(id: unknown): string {
    try {
      return exerciseName(id, 'id');
    } catch {
      throw new EngineError('EXERCISE_NOT_FOUND', { id: String(id) });
    }
  }

  private setOf(set: unknown): string {
    try {
      return exerciseName(set, 'set');
    } catch {
      throw new EngineError('INVALID_QUERY_PARAMETER', {
        name: 'set',
        detail: 'a set is named like a database: 1 to 64 of a-z, 0-9, _ and -',
      });
    }
  }
}

/** A row to show, and whether its student is a former one. */
interface ChosenStudent {
  readonly student: Student;
  readonly former: boolean;
}

/** The body of POST /exercises/{id}/check: `{ "sql": "…" }`. */
function sqlOf(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new EngineError('EXERCISE_CHECK_INVALID', { detail: 'the body must be a JSON object { "sql": "…" }' });
  const fields = body as Record<string, unknown>;
  const extra = Object.keys(fields).filter((key) => key !== 'sql');
  if (extra.length > 0)
    throw new EngineError('EXERCISE_CHECK_INVALID', { detail: `unknown field "${extra[0] as string}"` });
  if (typeof fields.sql !== 'string' || fields.sql.trim() === '')
    throw new EngineError('EXERCISE_CHECK_INVALID', { detail: '"sql" must be a non-empty string' });
  return fields.sql;
}
