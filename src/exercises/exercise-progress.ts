/**
 * Who solved what: the progress of a class, read from the journal's
 * `attempt` entries. Kept in memory per token and exercise (counts and a few
 * times, never the SQL), fed by every durable chunk, and seeded once, on the
 * first look, by reading the journal's attempts from its first kept entry, so
 * that a restart forgets nothing the journal keeps. Without a journal
 * (-log-level none) the checker hands attempts over directly, and they last
 * until the server stops.
 *
 * Stuck: an exercise not solved, with STUCK_ATTEMPTS or more wrong answers in
 * the last STUCK_MINUTES minutes, as of the clock (injected, for tests).
 *
 * A student is a token, told by its id, not its name: a class prefix is
 * reused every term (the tokens revoked, a new class made with the same
 * prefix), and the new alumno-01 is another person, who must not inherit the
 * old one's marks. An entry without a token id (a server without tokens, or
 * a journal written before ids) is told by its name alone, apart from every
 * token's id: a name does not prove which token sent it.
 */
import type { Journal } from '../../journal/journal';
import { readPage } from '../../journal/page-reader';
import type { JournalEntry } from '../../journal/record';
import type { Clock } from '../clock';
import type { StoredExercise } from './exercise-definition';

export const STUCK_ATTEMPTS = 3;
export const STUCK_MINUTES = 10;
/** Times of wrong answers kept per token and exercise: enough for any stuck rule a teacher asks for. */
const RECENT_FAILURES = 20;

export interface StuckRule {
  readonly attempts: number;
  readonly minutes: number;
}

interface Tally {
  attempts: number;
  failed: number;
  solvedAt: string | null;
  lastAttemptAt: string | null;
  lastErrorClass: number | null;
  /** Times (ms) of the latest wrong answers, oldest first. */
  recentFailures: number[];
}

export type CellState = 'solved' | 'stuck' | 'tried' | 'not-tried';

export interface ProgressCell {
  exercise: string;
  attempts: number;
  failed: number;
  solved: boolean;
  solvedAt: string | null;
  lastAttemptAt: string | null;
  lastErrorClass: number | null;
  stuck: boolean;
  state: CellState;
}

export interface StudentProgress {
  /** The token's name. */
  token: string;
  /** The token's id; null for attempts that name no token id. */
  tokenId: string | null;
  solved: number;
  attempts: number;
  stuck: number;
  exercises: ProgressCell[];
}

/** A row of the grid: a token by its id, with the name it bears; `id` null for attempts that carry no token id. */
export interface Student {
  readonly id: string | null;
  readonly name: string;
}

/** Who sent an attempt: its token's id, or (no id) its name; a server without tokens names nobody. */
function studentOf(entry: Pick<JournalEntry, 'tokenId' | 'tokenName'>): Student {
  return { id: entry.tokenId ?? null, name: entry.tokenName ?? 'anonymous' };
}

/** The map key of a student: ids and bare names never meet, whatever a name looks like. */
function keyOf(student: Student): string {
  return student.id === null ? `name:${student.name}` : `id:${student.id}`;
}

interface StudentTallies {
  readonly student: Student;
  /** Exercise id → tally. */
  readonly byExercise: Map<string, Tally>;
}

export class ExerciseProgress {
  /** keyOf(student) → the student and their tallies. */
  private readonly tallies = new Map<string, StudentTallies>();
  private readonly subscribedAt: number;
  private seeding: Promise<void> | undefined;
  /** Attempts that arrived before the seeding finished: they are newer than every seeded one. */
  private live: JournalEntry[] | null = [];

  constructor(
    private readonly journal: Journal,
    private readonly activeFile: string | null,
    private readonly clock: Clock,
  ) {
    this.subscribedAt = journal.lastSeq;
    journal.onAppended((appended) => {
      for (const { entry } of appended) if (entry.kind === 'attempt') this.take(entry);
    });
  }

  /** An attempt the journal did not take (no journal): counted until the server stops. */
  noteUnjournaled(entry: Pick<JournalEntry, 'ts' | 'tokenId' | 'tokenName' | 'exercise' | 'correct' | 'class'>): void {
    this.take({
      seq: 0,
      db: null,
      session: null,
      kind: 'attempt',
      sql: '',
      ok: entry.class === undefined,
      ms: 0,
      ...entry,
    });
  }

  private take(entry: JournalEntry): void {
    if (this.live !== null) this.live.push(entry);
    else this.count(entry);
  }

  private count(entry: JournalEntry): void {
    if (entry.exercise === undefined) return;
    const student = studentOf(entry);
    let known = this.tallies.get(keyOf(student));
    if (known === undefined) {
      known = { student, byExercise: new Map() };
      this.tallies.set(keyOf(student), known);
    }
    const byExercise = known.byExercise;
    let tally = byExercise.get(entry.exercise);
    if (tally === undefined) {
      tally = { attempts: 0, failed: 0, solvedAt: null, lastAttemptAt: null, lastErrorClass: null, recentFailures: [] };
      byExercise.set(entry.exercise, tally);
    }
    tally.attempts++;
    tally.lastAttemptAt = entry.ts;
    if (entry.class !== undefined) tally.lastErrorClass = entry.class;
    if (entry.correct === true) {
      tally.solvedAt ??= entry.ts;
      return;
    }
    tally.failed++;
    tally.recentFailures.push(Date.parse(entry.ts));
    if (tally.recentFailures.length > RECENT_FAILURES) tally.recentFailures.shift();
  }

  /** Reads every attempt the journal keeps up to the subscription, once. */
  private ensureSeeded(): Promise<void> {
    this.seeding ??= this.seed();
    return this.seeding;
  }

  private async seed(): Promise<void> {
    if (this.activeFile !== null && this.journal.enabled) {
      let after = 0;
      try {
        while (after < this.subscribedAt) {
          const page = await readPage(this.activeFile, {
            after,
            through: this.subscribedAt,
            limit: 5000,
            maxBytes: 8 * 1024 * 1024,
            accept: (entry) => entry.kind === 'attempt',
          });
          for (const { entry } of page.entries) this.count(entry);
          if (page.scannedThrough <= after) break;
          after = page.scannedThrough;
        }
      } catch {
        // A journal that cannot be read leaves the attempts seen live.
      }
    }
    for (const entry of this.live ?? []) this.count(entry);
    this.live = null;
  }

  /** The names of the students that have attempted anything (two tokens of one name give it twice). */
  async students(): Promise<string[]> {
    return (await this.attempters()).map((student) => student.name);
  }

  /** The students that have attempted anything, each token by its id. */
  async attempters(): Promise<Student[]> {
    await this.ensureSeeded();
    return [...this.tallies.values()].map((known) => known.student);
  }

  /**
   * The grid: one row per student, one cell per exercise, in the exercises'
   * order. A student given as a bare name is one whose attempts carry no
   * token id.
   */
  async grid(
    students: ReadonlyArray<Student | string>,
    exercises: readonly StoredExercise[],
    rule: StuckRule,
    at: number = this.clock.now(),
  ): Promise<StudentProgress[]> {
    await this.ensureSeeded();
    const since = at - rule.minutes * 60_000;
    return students.map((given) => {
      const student: Student = typeof given === 'string' ? { id: null, name: given } : given;
      const byExercise = this.tallies.get(keyOf(student))?.byExercise;
      const cells = exercises.map((exercise): ProgressCell => {
        const tally = byExercise?.get(exercise.id);
        if (tally === undefined)
          return {
            exercise: exercise.id,
            attempts: 0,
            failed: 0,
            solved: false,
            solvedAt: null,
            lastAttemptAt: null,
            lastErrorClass: null,
            stuck: false,
            state: 'not-tried',
          };
        const solved = tally.solvedAt !== null;
        const recent = tally.recentFailures.filter((time) => time > since && time <= at).length;
        const stuck = !solved && recent >= rule.attempts;
        return {
          exercise: exercise.id,
          attempts: tally.attempts,
          failed: tally.failed,
          solved,
          solvedAt: tally.solvedAt,
          lastAttemptAt: tally.lastAttemptAt,
          lastErrorClass: tally.lastErrorClass,
          stuck,
          state: solved ? 'solved' : stuck ? 'stuck' : 'tried',
        };
      });
      return {
        token: student.name,
        tokenId: student.id,
        solved: cells.filter((cell) => cell.solved).length,
        attempts: cells.reduce((sum, cell) => sum + cell.attempts, 0),
        stuck: cells.filter((cell) => cell.stuck).length,
        exercises: cells,
      };
    });
  }
}
