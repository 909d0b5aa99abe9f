/**
 * The audit trace of refused requests: a request refused for who sent it or
 * what it tried to reach (401, 403, or a statement refused as hostile,
 * [SQ1003]) goes to the journal as a `refused` entry (at level `all` only:
 * the level decides, in Journal.records) and to the class view. The HTTP
 * layer finds them (src/http/bookkeeping/refusal-trace.ts) and also logs and counts them.
 *
 * Nothing here may fail or delay the answer: the client gets its 401 or 403
 * whether or not the journal can take the entry (a failure is logged).
 */
import type { JournalEvent } from '../../journal/journal';
import type { NewEntry } from '../../journal/writer';
import { errorClass } from '../errors';

export interface Refusal {
  /** ISO time of the answer. */
  readonly ts: string;
  readonly status: number;
  readonly code: number;
  /** The message the client got. */
  readonly error: string;
  /** The token that sent it; null without one (a 401, a server without tokens). */
  readonly tokenId: string | null;
  readonly tokenName: string | null;
  /** The client's address as the server saw it. */
  readonly client: string;
  /** The database it asked for, when it named a valid one. */
  readonly db: string | null;
  /** Method and path, without the query string: `POST /exec`. */
  readonly request: string;
}

/** What the trace needs of the write path: a note that never throws and changes nothing. */
export interface RefusalJournal {
  note(event: JournalEvent, entry: NewEntry): Promise<void>;
}

/** What the trace needs of the class view. */
export interface RefusalListener {
  noteRefusal(refusal: Refusal): void;
}

/** The journal entry of a refusal. */
export function refusalEntry(refusal: Refusal): NewEntry {
  const entry: NewEntry = {
    db: refusal.db,
    session: null,
    kind: 'refused',
    sql: null,
    ok: false,
    ms: 0,
    code: refusal.code,
    class: errorClass(refusal.code),
    error: refusal.error,
    client: refusal.client,
    request: refusal.request,
  };
  return refusal.tokenId === null || refusal.tokenName === null
    ? entry
    : { ...entry, tokenId: refusal.tokenId, tokenName: refusal.tokenName };
}

export class Refusals {
  constructor(
    private readonly journal: RefusalJournal,
    private readonly listener: RefusalListener,
  ) {}

  /** Records one refusal; returns at once (the journal's write is not awaited). */
  record(refusal: Refusal): void {
    this.listener.noteRefusal(refusal);
    // WritePath.note logs a journal that cannot take the entry instead of throwing; the catch is for anything else.
    this.journal.note('refused', refusalEntry(refusal)).catch(() => undefined);
  }
}
