/**
 * What an exercise is, and the checks a definition must pass before it is
 * stored: a teacher's typo is answered with every field named, never stored
 * for thirty students to trip over. Pure: the store and the checker build on it.
 */
import { EngineError } from '../errors';
import { isClientName, normalizeDatabaseName } from '../database-names';

export type RowOrder = 'any' | 'exact';
export type ColumnMatch = 'position' | 'name';

/** An exercise as the teacher writes it (POST and PUT /exercises). */
export interface ExerciseDefinition {
  readonly id: string;
  readonly set: string;
  readonly position: number;
  readonly title: string;
  readonly prompt: string;
  /** A database name, normalized (`chinook.db`). */
  readonly template: string;
  readonly solution: string;
  readonly order: RowOrder;
  readonly columns: ColumnMatch;
  /** Largest difference between two numbers still taken as equal. */
  readonly tolerance: number;
  /** For a task that changes data: run after the answer and after the solution, and compared instead. */
  readonly check: string | null;
  /** Feedback may quote the first missing and the first extra row. */
  readonly showRows: boolean;
}

/** An exercise as stored: its definition, and when it was last changed. */
export interface StoredExercise extends ExerciseDefinition {
  /** ISO time of the last POST or PUT. */
  readonly updated: string;
  /** Grows with every change: cached solution results name it. */
  readonly revision: number;
}

/** What a token without `admin` sees of an exercise: never its solution or its check. */
export type PublicExercise = Omit<StoredExercise, 'solution' | 'check'>;

/** Numbers this close are equal unless the exercise says otherwise: two ways of computing a float differ in the last bits. */
export const DEFAULT_TOLERANCE = 1e-9;
export const MAX_TITLE = 200;
export const MAX_PROMPT = 20_000;
export const MAX_SQL = 20_000;
const FIELDS = [
  'id',
  'set',
  'position',
  'title',
  'prompt',
  'template',
  'solution',
  'order',
  'columns',
  'tolerance',
  'check',
  'showRows',
];

function invalid(detail: string): EngineError {
  return new EngineError('EXERCISE_INVALID', { detail });
}

/** An exercise's id or set: the rules of database names (a-z 0-9 _ -, 1 to 64), trimmed and lower-cased. */
export function exerciseName(raw: unknown, field: string): string {
  const name = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (!isClientName(name)) throw invalid(`"${field}" must be 1 to 64 characters of a-z, 0-9, _ and -`);
  return name;
}

function text(body: Record<string, unknown>, field: string, max: number, required: boolean): string {
  const value = body[field];
  if (value === undefined && !required) return '';
  if (typeof value !== 'string' || (required && value.trim() === ''))
    throw invalid(`"${field}" must be a non-empty string`);
  if (value.length > max) throw invalid(`"${field}" is longer than ${max} characters`);
  return value;
}

function oneOf<T extends string>(body: Record<string, unknown>, field: string, values: readonly T[], fallback: T): T {
  const value = body[field];
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value))
    throw invalid(`"${field}" must be one of ${values.join(', ')}`);
  return value as T;
}

/**
 * Reads a definition from a request body; `id` comes from the path for a PUT
 * (the body may repeat it). `position` defaults to `nextPosition` (after the
 * set's last exercise).
 */
export function readDefinition(
  body: unknown,
  nextPosition: (set: string) => number,
  pathId?: string,
): ExerciseDefinition {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !FIELDS.includes(key));
  if (unknown.length > 0)
    throw invalid(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `"${key}"`).join(', ')}`);
  const id = exerciseName(fields.id ?? pathId, 'id');
  if (pathId !== undefined && id !== pathId) throw invalid(`"id" is ${id} but the path names ${pathId}`);
  const set = exerciseName(fields.set, 'set');
  const position = fields.position === undefined ? nextPosition(set) : fields.position;
  if (!Number.isSafeInteger(position) || (position as number) < 0)
    throw invalid('"position" must be a non-negative integer');
  let template: string;
  try {
    template = normalizeDatabaseName(fields.template);
  } catch {
    throw invalid('"template" must name a database (a-z, 0-9, _ and -)');
  }
  const tolerance = fields.tolerance === undefined ? DEFAULT_TOLERANCE : fields.tolerance;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0)
    throw invalid('"tolerance" must be a number, 0 or more');
  const check = fields.check === undefined || fields.check === null ? null : text(fields, 'check', MAX_SQL, true);
  if (fields.showRows !== undefined && typeof fields.showRows !== 'boolean')
    throw invalid('"showRows" must be true or false');
  return {
    id,
    set,
    position: position as number,
    title: text(fields, 'title', MAX_TITLE, true),
    prompt: text(fields, 'prompt', MAX_PROMPT, false),
    template,
    solution: text(fields, 'solution', MAX_SQL, true),
    order: oneOf(fields, 'order', ['any', 'exact'] as const, 'any'),
    columns: oneOf(fields, 'columns', ['position', 'name'] as const, 'position'),
    tolerance,
    check,
    showRows: fields.showRows === true,
  };
}

/** The exercise without what only an admin may see. */
export function publicView(exercise: StoredExercise): PublicExercise {
  // Spelled out, so that a field added later is not shown by accident.
  const { id, set, position, title, prompt, template, order, columns, tolerance, showRows, updated, revision } =
    exercise;
  return { id, set, position, title, prompt, template, order, columns, tolerance, showRows, updated, revision };
}

/** Set, then position, then id: the order of a lesson. */
export function lessonOrder(a: StoredExercise, b: StoredExercise): number {
  if (a.set !== b.set) return a.set < b.set ? -1 : 1;
  if (a.position !== b.position) return a.position - b.position;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
