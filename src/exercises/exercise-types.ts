/**
 * The shapes the exercises answer with, apart from the code that makes them:
 * the command bus names them in its results, and must not import the checker
 * (which parses SQL with the bus's own parser).
 */
import type { EngineError } from '../errors';
import type { EvidenceLevel } from '../pilots/pilot-schema';
import type { PublicExercise, StoredExercise } from './exercise-definition';
import type { EvidenceThresholds } from './exercise-evidence';
import type { StudentProgress, StuckRule } from './exercise-progress';
import type { Feedback } from './result-compare';

/** What the answer's error says: enough to fix it, as /exec would say it. */
export interface AnswerError {
  code: number;
  class: number;
  message: string;
  /** The failing statement of the answer (0-based), when one is to blame. */
  statement?: number;
}

export interface CheckOutcome {
  correct: boolean;
  feedback: Feedback & { truncated?: true };
  error?: AnswerError;
  /** For the journal: the engine error the answer failed with. */
  failure?: EngineError;
}

export type ExerciseView = StoredExercise | PublicExercise;

/** What the teacher asks of GET /exercises/progress and /evidence. */
export interface ClassQuery {
  readonly set?: string;
  /** A glob of token names (`clase-*`): only these students. */
  readonly tokens?: string;
  /** `current` (the default): the tokens the server has now; `all`: also former students (revoked tokens), apart. */
  readonly students?: StudentsShown;
  readonly stuck: StuckRule;
  /** The time the stuck rule is judged at (ms); now when absent. */
  readonly at?: number;
}

export const STUDENTS_SHOWN = ['current', 'all'] as const;
export type StudentsShown = (typeof STUDENTS_SHOWN)[number];

/** A row of the class's grid: `former` for a token that is no longer the server's (revoked), whose name may be another's now. */
export interface ClassRow extends StudentProgress {
  former: boolean;
}

export interface ProgressReport {
  set: string | null;
  at: string;
  stuck: StuckRule;
  exercises: Array<Pick<StoredExercise, 'id' | 'set' | 'position' | 'title'>>;
  students: ClassRow[];
}

export interface EvidenceReport {
  set: string;
  exercises: number;
  students: number;
  thresholds: EvidenceThresholds;
  aggregate_evidence: Record<EvidenceLevel, number>;
}

/** A student's own row: GET /exercises/mine. */
export interface OwnProgress extends StudentProgress {
  set: string | null;
}
