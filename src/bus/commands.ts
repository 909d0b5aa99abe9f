/**
 * The commands that route handlers send to the command bus. A command says
 * what a client asked for, still unvalidated where the bus must validate it.
 */
import type { StatementResult, RowPage, ForeignKeyViolation } from '../engine/protocol';
import type { Batch, RefusedBatch, SqlSource } from '../engine/batch';
import type { TableSchema } from '../engine/schema/schema';
import type { SessionInfo } from '../sessions/session-manager';
import type { PilotFilter, StoredPilot } from '../pilots/pilot-store';
import type { CreatedToken, TokenView } from '../tokens/token-registry';
import type { PilotSummary, SummaryGrouping } from '../pilots/pilot-summary';
import type { ExportFormat } from '../engine/transfer/database-export';
import type { RewrittenObject } from '../engine/transfer/import-script';
import type { ColumnType } from '../engine/types';
import type { DatabaseActivity, RecentError, RecentRefusal } from '../services/class-activity';
import type { RestoreOutcome } from '../services/databases/database-restores';
import type { HistoryPage, HistoryRequest } from '../services/history';
import type { TableSchema as TemplateTable } from '../engine/schema/schema';
import type { StoredExercise } from '../exercises/exercise-definition';
import type {
  CheckOutcome,
  ClassQuery,
  EvidenceReport,
  ExerciseView,
  OwnProgress,
  ProgressReport,
} from '../exercises/exercise-types';

/** GET /class: one database of the class, with the template it can be reset to. */
/**
 * A recent error or refusal as the class view shows it: `former` when the
 * token that caused it is the server's no longer (revoked), so that a later
 * token of the same name (a class prefix reused next term) is not taken for it.
 */
export type Attributed<T> = T & { former: boolean };

export interface ClassDatabase extends Omit<DatabaseActivity, 'recentErrors'> {
  template?: string;
  recentErrors: Array<Attributed<RecentError>>;
}

/** What POST /dbs/{db}/import received: a script's text, a CSV's text for one table, or an uploaded .sqlite file (a temporary file the route owns). */
export type ImportSource =
  | { readonly format: 'sql'; readonly text: string }
  | { readonly format: 'csv'; readonly text: string; readonly table: string; readonly types?: readonly ColumnType[] }
  | { readonly format: 'sqlite'; readonly file: string };

/**
 * How an import reads its body: only when the handler runs, so that a token
 * that may not import is refused before a byte of a large upload is read;
 * `work` gets the body, and an uploaded file is removed after it.
 */
export type ImportUpload = <T>(work: (source: ImportSource) => Promise<T>) => Promise<T>;

export type Command =
  | { readonly type: 'list-databases' }
  | { readonly type: 'create-database'; readonly db: unknown }
  | { readonly type: 'copy-databases'; readonly names: readonly unknown[]; readonly from: unknown }
  | { readonly type: 'reset-database'; readonly db: unknown }
  | { readonly type: 'restore-database'; readonly db: unknown; readonly body: unknown }
  | { readonly type: 'list-tables'; readonly db: unknown }
  | { readonly type: 'show-schema'; readonly db: unknown; readonly table: string }
  | {
      readonly type: 'read-rows';
      readonly db: unknown;
      readonly table: string;
      readonly limit: number;
      readonly offset: number;
      readonly after: string | null;
    }
  /** `sources` as sent (the journal keeps their text), `batch` parsed from them before dispatch, so that every middleware knows whether it writes. */
  | {
      readonly type: 'exec';
      readonly db: unknown;
      readonly sources: readonly SqlSource[];
      readonly batch: Batch | RefusedBatch;
      readonly session?: string;
    }
  | { readonly type: 'begin-session'; readonly db: unknown }
  | { readonly type: 'end-session'; readonly session: string; readonly commit: boolean }
  | {
      readonly type: 'import';
      readonly db: unknown;
      readonly upload: ImportUpload;
      readonly onProgress?: (statements: number, of: number) => void;
    }
  | { readonly type: 'export'; readonly db: unknown; readonly format: ExportFormat; readonly table: string | null }
  | { readonly type: 'create-pilot'; readonly record: unknown }
  | { readonly type: 'get-pilot'; readonly id: number }
  | { readonly type: 'list-pilots'; readonly filter: PilotFilter; readonly limit: number; readonly offset: number }
  | { readonly type: 'summarize-pilots'; readonly groupBy?: SummaryGrouping }
  | { readonly type: 'create-tokens'; readonly body: unknown }
  | { readonly type: 'list-tokens' }
  | { readonly type: 'revoke-token'; readonly id: string }
  | { readonly type: 'class-activity' }
  | { readonly type: 'history'; readonly db: unknown; readonly request: HistoryRequest }
  | { readonly type: 'list-exercises'; readonly set?: unknown }
  | { readonly type: 'get-exercise'; readonly id: unknown }
  | { readonly type: 'exercise-tables'; readonly id: unknown }
  | { readonly type: 'create-exercise'; readonly body: unknown }
  | { readonly type: 'replace-exercise'; readonly id: unknown; readonly body: unknown }
  | { readonly type: 'delete-exercise'; readonly id: unknown }
  | { readonly type: 'check-exercise'; readonly id: unknown; readonly body: unknown }
  | { readonly type: 'exercise-progress'; readonly query: ClassQuery }
  | { readonly type: 'own-progress'; readonly set?: unknown }
  | {
      readonly type: 'exercise-evidence';
      readonly query: ClassQuery;
      readonly thresholds: Readonly<Record<'en_desarrollo' | 'logrado' | 'profundizado', string | undefined>>;
    };

export interface DatabaseList {
  mode: 'single-db' | 'multi-db';
  dbs: string[];
  single?: string;
}

export interface ExecOutcome {
  /** The database the batch ran on; null for database-level statements. */
  db: string | null;
  results: StatementResult[];
  /** Present when the batch ran in a session. */
  session?: SessionInfo;
}

export interface ImportOutcome {
  db: string;
  format: ImportSource['format'];
  /** Statements run (a script's skipped BEGIN and COMMIT not counted). */
  statements: number;
  /** Rows inserted, updated or deleted, all statements together. */
  changes: number;
  /** csv: the table, and whether the import created it. */
  table?: string;
  created?: boolean;
  /** 'off' when the import ran without foreign key enforcement (a script that turns it off, an uploaded file). */
  foreignKeys: 'on' | 'off';
  /** With foreign keys off: the rows whose keys point nowhere after the import, by table (`PRAGMA foreign_key_check`). */
  foreignKeyViolations?: ForeignKeyViolation[];
  /** The script's PRAGMA statements taken as settings (foreign keys, or no-ops) rather than run. */
  settings?: string[];
  /** Triggers and views whose double-quoted string literals were single-quoted. */
  rewritten?: RewrittenObject[];
}

export interface ExportCopy {
  db: string;
  /** A temporary file holding the copy; whoever sends it removes it (and its directory) afterwards. */
  file: string;
  /** The name to offer the client (Content-Disposition). */
  filename: string;
  contentType: string;
}

export interface TablePage extends RowPage {
  db: string;
}

/** What each command answers with. */
export interface CommandResults {
  'list-databases': DatabaseList;
  'create-database': { db: string };
  'copy-databases': { dbs: string[]; from: string };
  'reset-database': { db: string; template: string };
  'restore-database': RestoreOutcome;
  'list-tables': { db: string; tables: TableSchema[] };
  'show-schema': { db: string; table: TableSchema };
  'read-rows': TablePage;
  exec: ExecOutcome;
  'begin-session': SessionInfo;
  'end-session': { db: string; message: 'COMMIT' | 'ROLLBACK' };
  import: ImportOutcome;
  export: ExportCopy;
  'create-pilot': StoredPilot;
  'get-pilot': StoredPilot;
  'list-pilots': { total: number; pilots: StoredPilot[] };
  'summarize-pilots': PilotSummary;
  /** `databases`: the databases a class request created (those that did not exist). */
  'create-tokens': { tokens: CreatedToken[]; databases: string[] };
  'list-tokens': { tokens: TokenView[] };
  'revoke-token': { token: TokenView };
  'class-activity': { databases: ClassDatabase[]; refused: Array<Attributed<RecentRefusal>> };
  history: HistoryPage & { db: string };
  'list-exercises': { exercises: ExerciseView[] };
  'get-exercise': ExerciseView;
  'exercise-tables': { id: string; template: string; tables: TemplateTable[] };
  'create-exercise': StoredExercise;
  'replace-exercise': StoredExercise;
  'delete-exercise': { id: string };
  'check-exercise': Omit<CheckOutcome, 'failure'> & { exercise: string };
  'exercise-progress': ProgressReport;
  'own-progress': OwnProgress;
  'exercise-evidence': EvidenceReport;
}

export type CommandType = Command['type'];

export type CommandOf<T extends CommandType> = Extract<Command, { type: T }>;
