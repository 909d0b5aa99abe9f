/**
 * The commands that route handlers send to the command bus. A command says
 * what a client asked for, still unvalidated where the bus must validate it.
 */
import type { SqlParams, StatementResult, RowPage } from '../engine/protocol';
import type { TableSchema } from '../engine/schema';
import type { SessionInfo } from '../sessions/session-manager';
import type { PilotFilter, StoredPilot } from '../pilots/pilot-store';
import type { CreatedToken, TokenView } from '../tokens/token-registry';
import type { PilotSummary, SummaryGrouping } from '../pilots/pilot-summary';

/** One piece of SQL from a request, with its parameters if any. */
export interface SqlSource {
  readonly sql: string;
  readonly params?: SqlParams;
}

export type Command =
  | { readonly type: 'list-databases' }
  | { readonly type: 'create-database'; readonly db: unknown }
  | { readonly type: 'list-tables'; readonly db: unknown }
  | { readonly type: 'show-schema'; readonly db: unknown; readonly table: string }
  | { readonly type: 'read-rows'; readonly db: unknown; readonly table: string; readonly limit: number; readonly offset: number; readonly after: string | null }
  | { readonly type: 'exec'; readonly db: unknown; readonly sources: readonly SqlSource[]; readonly session?: string }
  | { readonly type: 'begin-session'; readonly db: unknown }
  | { readonly type: 'end-session'; readonly session: string; readonly commit: boolean }
  | { readonly type: 'create-pilot'; readonly record: unknown }
  | { readonly type: 'get-pilot'; readonly id: number }
  | { readonly type: 'list-pilots'; readonly filter: PilotFilter; readonly limit: number; readonly offset: number }
  | { readonly type: 'summarize-pilots'; readonly groupBy?: SummaryGrouping }
  | { readonly type: 'create-tokens'; readonly body: unknown }
  | { readonly type: 'list-tokens' }
  | { readonly type: 'revoke-token'; readonly id: string };

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

export interface TablePage extends RowPage {
  db: string;
}

/** What each command answers with. */
export interface CommandResults {
  'list-databases': DatabaseList;
  'create-database': { db: string };
  'list-tables': { db: string; tables: TableSchema[] };
  'show-schema': { db: string; table: TableSchema };
  'read-rows': TablePage;
  exec: ExecOutcome;
  'begin-session': SessionInfo;
  'end-session': { db: string; message: 'COMMIT' | 'ROLLBACK' };
  'create-pilot': StoredPilot;
  'get-pilot': StoredPilot;
  'list-pilots': { total: number; pilots: StoredPilot[] };
  'summarize-pilots': PilotSummary;
  /** `databases`: the databases a class request created (those that did not exist). */
  'create-tokens': { tokens: CreatedToken[]; databases: string[] };
  'list-tokens': { tokens: TokenView[] };
  'revoke-token': { token: TokenView };
}

export type CommandType = Command['type'];

export type CommandOf<T extends CommandType> = Extract<Command, { type: T }>;
