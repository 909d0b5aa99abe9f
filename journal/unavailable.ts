/** The error every journal write failure becomes, so the write path has one thing to answer. */

/**
 * The journal could not durably take an entry (disk full, I/O error, failed
 * sync or rotation). Nothing of the entry is left in the journal, its seq will
 * be given again, and the next append tries the journal again.
 */
export class JournalUnavailableError extends Error {
  /** The errno code of the cause (`ENOSPC`, `EIO`…), or `EUNKNOWN` when it had none. */
  readonly code: string;

  constructor(cause: unknown) {
    const code = errnoCode(cause) ?? 'EUNKNOWN';
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`the journal is unavailable (${code}): ${detail}`, { cause });
    this.name = 'JournalUnavailableError';
    this.code = code;
  }
}

function errnoCode(cause: unknown): string | undefined {
  if (cause instanceof JournalUnavailableError) return cause.code;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
