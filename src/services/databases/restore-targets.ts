/**
 * The pure half of a restore (POST /dbs/{db}/restore): what the body asks
 * for, which seq that is in the journal, and which entries the restore
 * undoes. The other half, the rebuild and the swap, is database-restores.ts.
 */
import { EngineError } from '../../errors';
import { ISO_TIME_EXPECTED, parseIsoTime } from '../../iso-time';
import type { JournalEntry } from '../../../journal/record';

/** What a client may ask: a seq, a time, or the undo of its own last write. */
export type RestoreAsk =
  { readonly to: number } | { readonly time: number; readonly text: string } | { readonly undo: 'last' };

export interface RestoreRequest {
  readonly ask: RestoreAsk;
  readonly dryRun: boolean;
}

/** An entry a restore undoes, as a dry run lists it. */
export interface UndoneEntry {
  seq: number;
  time: string;
  token: string | null;
  kind: JournalEntry['kind'];
  sql: string | null;
  changes: number | null;
}

/** Most undone entries a dry run lists; its count stays exact. */
export const MAX_UNDONE_LISTED = 500;

function invalid(db: string, detail: string): EngineError {
  return new EngineError('RESTORE_TARGET_INVALID', { db, detail });
}

/** Reads `{"to": seq}`, `{"to": "<ISO time>"}` or `{"undo": "last"}`, each with an optional `dryRun`. */
export function parseRestoreBody(db: string, body: unknown): RestoreRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid(db, 'send a JSON object with "to" (a seq or an ISO time) or "undo": "last"');
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => key !== 'to' && key !== 'undo' && key !== 'dryRun');
  if (unknown.length > 0)
    throw invalid(db, `unknown field ${JSON.stringify(unknown[0])}: use "to", "undo" and "dryRun"`);
  if (fields.dryRun !== undefined && typeof fields.dryRun !== 'boolean')
    throw invalid(db, '"dryRun" must be true or false');
  const dryRun = fields.dryRun === true;
  if ((fields.to === undefined) === (fields.undo === undefined))
    throw invalid(db, 'give exactly one of "to" and "undo"');
  if (fields.undo !== undefined) {
    if (fields.undo !== 'last') throw invalid(db, '"undo" takes only "last"');
    return { ask: { undo: 'last' }, dryRun };
  }
  if (typeof fields.to === 'number') {
    if (!Number.isSafeInteger(fields.to) || fields.to < 0)
      throw invalid(db, '"to" must be a seq (an integer, 0 or more) or an ISO time');
    return { ask: { to: fields.to }, dryRun };
  }
  // The reader history's since and until share (iso-time.ts): a real day of the calendar, its zone given.
  const time = typeof fields.to === 'string' ? parseIsoTime(fields.to) : { refused: 'it is not text' };
  if (typeof time !== 'number') throw invalid(db, `"to" must be a seq or ${ISO_TIME_EXPECTED}: ${time.refused}`);
  return { ask: { time, text: fields.to as string }, dryRun };
}

/** A write that took effect on `db`: what an undo goes back before, and what a restore lists as undone. */
export function isWriteOn(entry: JournalEntry, db: string): boolean {
  if (entry.db !== db || !entry.ok) return false;
  switch (entry.kind) {
    case 'exec':
      return entry.session === null && entry.readonly !== true;
    case 'commit':
    case 'createdb':
    case 'copydb':
    case 'resetdb':
    case 'restoredb':
      return true;
    default:
      return false;
  }
}

/**
 * The seq a request names. `entries` is the journal as kept, oldest first
 * (every database's, or at least `db`'s from its latest creation on);
 * `lastSeq` the last durable seq; `tokenId` the caller's token (undefined on
 * a server without tokens: the last write by anyone is undone).
 *
 * A database's life begins at its latest creation: a name dropped and made
 * again (a class prefix reused next term) is another database, so no target
 * reaches before that creation (RESTORE_BEFORE_CREATION), and an undo looks
 * for the caller's last write in this life only. An undo takes back the
 * caller's own writes only: while a write by anyone else stands after it, it
 * is refused (UNDO_OVER_OTHERS_WRITES) rather than take theirs too.
 */
export function targetSeq(
  db: string,
  ask: RestoreAsk,
  entries: readonly JournalEntry[],
  lastSeq: number,
  now: number,
  tokenId: string | undefined,
): number {
  const born = latestCreation(entries, db);
  const seq = askedSeq(db, ask, entries, lastSeq, now, tokenId, born);
  if (born !== null && seq < born)
    throw new EngineError('RESTORE_BEFORE_CREATION', {
      db,
      target: 'time' in ask ? ask.text : `seq ${seq}`,
      oldest: born,
    });
  if ('undo' in ask && tokenId !== undefined) refuseOverOthers(db, entries, seq, tokenId);
  return seq;
}

function askedSeq(
  db: string,
  ask: RestoreAsk,
  entries: readonly JournalEntry[],
  lastSeq: number,
  now: number,
  tokenId: string | undefined,
  born: number | null,
): number {
  if ('to' in ask) {
    if (ask.to > lastSeq) throw invalid(db, `seq ${ask.to} is beyond the last entry of the journal, seq ${lastSeq}`);
    return ask.to;
  }
  if ('time' in ask) {
    if (ask.time > now) throw invalid(db, `${ask.text} is in the future`);
    let seq = (entries[0]?.seq ?? lastSeq + 1) - 1;
    for (const entry of entries) {
      if (Date.parse(entry.ts) > ask.time) break;
      seq = entry.seq;
    }
    return seq;
  }
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as JournalEntry;
    if (born !== null && entry.seq < born) break;
    if (isWriteOn(entry, db) && (tokenId === undefined || entry.tokenId === tokenId)) return entry.seq - 1;
  }
  throw new EngineError('NOTHING_TO_UNDO', { db, who: tokenId === undefined ? 'anyone' : 'this token' });
}

/**
 * An undo to `target` would take back every write in effect after it: each
 * must be the caller's own. Another token's restore counts as its write (it
 * is one, and what it undid is theirs to decide), and so does a write with no
 * token. The later writes of others are not replayed on top: a write's
 * effect on a state it was not sent against cannot be made exact.
 */
function refuseOverOthers(db: string, entries: readonly JournalEntry[], target: number, tokenId: string): void {
  let other: JournalEntry | null = null;
  let own: JournalEntry | null = null;
  for (const entry of writesInEffectAfter(entries, db, target)) {
    if (entry.tokenId === tokenId) own = entry;
    else other ??= entry;
  }
  if (other === null) return;
  throw new EngineError('UNDO_OVER_OTHERS_WRITES', {
    db,
    who: own?.tokenName ?? 'this token',
    own: target + 1,
    other: other.tokenName ?? 'a client without a token',
    after: other.seq,
  });
}

/**
 * The writes in effect on `db` now that were not at `target`, newest first.
 * Going back from the newest entry, a restore stands for its own write and
 * sends the walk to its target: the writes it undid are not in effect now.
 */
function* writesInEffectAfter(entries: readonly JournalEntry[], db: string, target: number): Generator<JournalEntry> {
  let below = Infinity;
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as JournalEntry;
    if (entry.seq <= target) return;
    if (entry.seq >= below || !isWriteOn(entry, db)) continue;
    yield entry;
    if (entry.kind === 'restoredb') below = (entry.to as number) + 1;
  }
}

/** The writes in effect on `db` now that were not at `target`, newest first, as a dry run lists them. */
export function undoneEntries(
  entries: readonly JournalEntry[],
  db: string,
  target: number,
): { count: number; entries: UndoneEntry[] } {
  const listed: UndoneEntry[] = [];
  let count = 0;
  for (const entry of writesInEffectAfter(entries, db, target)) {
    count++;
    if (listed.length < MAX_UNDONE_LISTED)
      listed.push({
        seq: entry.seq,
        time: entry.ts,
        token: entry.tokenName ?? null,
        kind: entry.kind,
        sql: entry.sql,
        changes: entry.changes ?? null,
      });
  }
  return { count, entries: listed };
}

/**
 * The seq of the latest successful createdb or copydb of `db` in `entries`:
 * where the life of the database that bears the name now began. Null when
 * `entries` hold none (retention removed it, or the file was made outside
 * the journal): then every entry kept is of this life.
 */
export function latestCreation(entries: readonly JournalEntry[], db: string): number | null {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index] as JournalEntry;
    if (entry.db === db && entry.ok && (entry.kind === 'createdb' || entry.kind === 'copydb')) return entry.seq;
  }
  return null;
}

/** The seq at which the database that exists now was made (its last createdb or copydb), or the first seq kept. */
export function creationSeq(entries: readonly JournalEntry[], db: string): number {
  return latestCreation(entries, db) ?? entries[0]?.seq ?? 0;
}

/** The ISO time of the entry `seq` (the time asked when the journal no longer has it). */
export function timeOf(entries: readonly JournalEntry[], seq: number, fallback: string): string {
  let low = 0;
  let high = entries.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const entry = entries[middle] as JournalEntry;
    if (entry.seq === seq) return entry.ts;
    if (entry.seq < seq) low = middle + 1;
    else high = middle - 1;
  }
  return fallback;
}
