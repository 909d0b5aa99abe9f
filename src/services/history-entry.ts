/**
 * How GET /dbs/{db}/history shows a journal entry: when, who, what (the SQL
 * exactly as sent) and how it went. Kinds other than exec pass through the
 * fields that describe them (a copy's `from`, a rollback's `reason`, a
 * void's `voids`, or whatever a later kind adds), without the journal's own
 * bookkeeping (statements with their parameters, clock, seed, crc, epoch).
 */
import type { JournalEntry } from '../../journal/record';

export interface HistoryEntry {
  seq: number;
  time: string;
  token: string | null;
  kind: string;
  sql: string | null;
  ok: boolean;
  [field: string]: unknown;
}

/** Fields that are bookkeeping, or shown under another name, never passed through. */
const NOT_SHOWN = new Set([
  'seq',
  'ts',
  'db',
  'tokenId',
  'tokenName',
  'kind',
  'sql',
  'ok',
  'statements',
  'readonly',
  'ms',
  'clock',
  'seed',
  'epoch',
  'crc',
  'client',
  'request',
]);

export function historyEntryOf(entry: JournalEntry): HistoryEntry {
  const shown: HistoryEntry = {
    seq: entry.seq,
    time: entry.ts,
    token: entry.tokenName ?? null,
    kind: entry.kind,
    sql: entry.sql,
    ok: entry.ok,
  };
  if (entry.kind === 'exec') {
    if (entry.ok) shown.changes = entry.changes ?? 0;
    else Object.assign(shown, failure(entry));
    if (entry.session !== null) shown.session = entry.session;
    return shown;
  }
  for (const [field, value] of Object.entries(entry)) {
    if (!NOT_SHOWN.has(field) && value !== null && value !== undefined) shown[field] = value;
  }
  return shown;
}

function failure(entry: JournalEntry): Record<string, unknown> {
  const fields: Record<string, unknown> = { code: entry.code, class: entry.class, error: entry.error };
  if (entry.statement !== undefined) fields.statement = entry.statement;
  return fields;
}
