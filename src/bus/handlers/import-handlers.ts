/**
 * import and export: a whole script, CSV file or .sqlite file loaded into a
 * database as one journaled batch, and a copy of a database taken from one
 * read snapshot.
 *
 * Every import becomes SQL statements before it runs (an uploaded .sqlite
 * file is turned into SQL in an engine process), and runs like an /exec batch
 * without its statement cap: one transaction, in an engine process, under the
 * query timeout, journaled as one `exec` entry, so that replay needs nothing
 * but the journal.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineError } from '../../errors';
import { csvImport } from '../../engine/transfer/csv-import';
import { splitStatements } from '../../engine/dialect/split';
import { importScript, type ImportScript } from '../../engine/transfer/import-script';
import type { CallContext, EngineHost, StatementResult } from '../../engine/protocol';
import type { BatchRunner } from '../../services/writes/batch-runner';
import type { DatabaseDirectory, DatabaseRef } from '../../services/databases/database-directory';
import type { ExportCopy, ImportOutcome, ImportSource } from '../commands';
import type { Handlers } from '../command-bus';

export interface ImportHandlerDeps {
  readonly directory: DatabaseDirectory;
  readonly engine: EngineHost;
  readonly batches: BatchRunner;
}

interface ImportPlan extends ImportScript {
  table?: string;
  created?: boolean;
}

const CONTENT_TYPES = {
  sql: 'application/sql; charset=utf-8',
  sqlite: 'application/vnd.sqlite3',
  csv: 'text/csv; charset=utf-8',
} as const;

/** Every table and column name of the database, for the literals of an import's triggers and views (quoted-literals.ts). */
async function namesIn(engine: EngineHost, ref: DatabaseRef): Promise<string[]> {
  return (await engine.tables(ref.file)).flatMap((table) => [
    table.name,
    ...table.columns.map((column) => column.name),
  ]);
}

async function planImport(
  { engine }: ImportHandlerDeps,
  ref: DatabaseRef,
  source: ImportSource,
  call: CallContext,
): Promise<ImportPlan> {
  if (source.format === 'sql')
    return importScript(splitStatements(source.text), { knownNames: await namesIn(engine, ref) });
  // A file comes in as SQLite opens it: its foreign keys are not enforced on the rows it holds.
  // Each statement as the splitter gives it back, which is what replay runs from the journal (an index's SQL as
  // SQLite stored it may end in a line break that the splitter drops, and the rebuilt schema would differ).
  if (source.format === 'sqlite')
    return importScript(
      (await engine.uploadStatements(source.file, call)).flatMap((statement) => splitStatements(statement)),
      {
        knownNames: await namesIn(engine, ref),
        foreignKeys: 'off',
      },
    );
  const existing = await engine.schema(ref.file, source.table);
  const csv = csvImport(
    source.text,
    source.table,
    existing,
    source.types === undefined ? undefined : [...source.types],
  );
  return { ...importScript(csv.statements), table: existing?.name ?? source.table, created: csv.created };
}

/** What the answer says beyond the counts: how foreign keys were treated, what was taken as a setting or rewritten. */
function planNotes(
  plan: ImportPlan,
  results: readonly StatementResult[],
): Pick<ImportOutcome, 'foreignKeys' | 'foreignKeyViolations' | 'settings' | 'rewritten'> {
  const notes: Pick<ImportOutcome, 'foreignKeys' | 'foreignKeyViolations' | 'settings' | 'rewritten'> = {
    foreignKeys: plan.foreignKeys,
  };
  if (plan.foreignKeys === 'off') notes.foreignKeyViolations = results[results.length - 1]?.foreignKeyViolations ?? [];
  if (plan.settings.length > 0) notes.settings = plan.settings;
  if (plan.rewritten.length > 0) notes.rewritten = plan.rewritten;
  return notes;
}

async function exportCopy(
  { directory, engine }: ImportHandlerDeps,
  db: unknown,
  format: 'sql' | 'sqlite' | 'csv',
  table: string | null,
  call: CallContext,
): Promise<ExportCopy> {
  const ref = directory.resolve(db);
  if (format === 'csv' && (table === null || table === ''))
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name: 'table',
      detail: 'format=csv exports one table: name it',
    });
  const base = ref.name.replace(/\.db$/, '');
  const filename =
    format === 'csv' ? `${base}-${(table ?? '').replace(/[^A-Za-z0-9_-]/g, '_')}.csv` : `${base}.${format}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-export-'));
  const file = path.join(dir, filename);
  try {
    await engine.exportDatabase(ref.file, { format, table, out: file }, call);
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { db: ref.name, file, filename, contentType: CONTENT_TYPES[format] };
}

/** The call, also telling `progress` how many statements have started (see CallContext.progress). */
function withProgress(call: CallContext, progress: (statements: number) => void): CallContext {
  return {
    get signal() {
      return call.signal;
    },
    ...(call.client === undefined ? {} : { client: call.client }),
    ...(call.principal === undefined ? {} : { principal: call.principal }),
    stopped: () => call.stopped?.() ?? false,
    progress,
  };
}

export function importHandlers(deps: ImportHandlerDeps): Pick<Handlers, 'import' | 'export'> {
  return {
    import: async (command, call) => {
      // An unknown database is refused before the body is read, as an unauthorized token was (bus middleware).
      const ref = deps.directory.resolve(command.db);
      return command.upload(async (source) => {
        const plan = await planImport(deps, ref, source, call);
        const total = plan.statements.length;
        const summary = `-- import (${source.format}): ${total} statements`;
        const report = command.onProgress;
        const runCall = report === undefined ? call : withProgress(call, (statements) => report(statements, total));
        report?.(0, total);
        let changes = 0;
        let results: StatementResult[];
        try {
          results = await deps.batches.run(ref, plan.statements, false, {
            call: runCall,
            summary,
            ...(plan.foreignKeys === 'off' ? { foreignKeys: 'off' as const } : {}),
          });
          for (const result of results) changes += result.changes ?? 0;
        } catch (error) {
          // The error names the statement as the script counts it (skipped BEGIN and settings included).
          if (error instanceof EngineError && error.statement !== undefined)
            error.statement = plan.positions[error.statement] ?? error.statement + plan.offset;
          throw error;
        }
        const outcome = {
          db: ref.name,
          format: source.format,
          statements: plan.statements.length,
          changes,
          ...planNotes(plan, results),
        };
        return plan.table === undefined ? outcome : { ...outcome, table: plan.table, created: plan.created === true };
      });
    },
    export: (command, call) => exportCopy(deps, command.db, command.format, command.table, call),
  };
}
