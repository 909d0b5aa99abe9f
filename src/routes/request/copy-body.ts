/**
 * The body of POST /dbs when it copies a template: `{ db, from }`,
 * `{ dbs: [names], from }` or `{ prefix, count, from }`, the last naming the
 * copies `prefix-01 … prefix-NN` (zero-padded to at least two digits, so that
 * they sort in order). Names are normalized by the handler like any other.
 */
import { numberedNames } from '../../database-names';
import { EngineError } from '../../errors';
import { MAX_COPIES } from '../../services/databases/database-copies';

function badRequest(detail: string): EngineError {
  return new EngineError('BAD_REQUEST', { detail });
}

/** Whether the body asks for copies of a template rather than a new empty database. */
export function isCopyBody(body: Record<string, unknown> | undefined): boolean {
  return body?.from !== undefined;
}

/** The names of the copies asked for, unnormalized. */
export function copyNames(body: Record<string, unknown>): unknown[] {
  const { db, dbs, prefix, count } = body;
  const forms = [db !== undefined, dbs !== undefined, prefix !== undefined || count !== undefined].filter(
    Boolean,
  ).length;
  if (forms !== 1) throw badRequest('send exactly one of "db", "dbs", or "prefix" with "count", beside "from"');
  if (db !== undefined) return [db];
  if (dbs !== undefined) {
    if (!Array.isArray(dbs) || dbs.length === 0) throw badRequest('"dbs" must be a non-empty array of names');
    return dbs;
  }
  return copyClassNames(prefix, count);
}

function copyClassNames(prefix: unknown, count: unknown): string[] {
  if (typeof prefix !== 'string') throw badRequest('"prefix" must be a string');
  if (!Number.isSafeInteger(count) || (count as number) < 1) throw badRequest('"count" must be a positive integer');
  const total = count as number;
  if (total > MAX_COPIES) throw new EngineError('TOO_MANY_COPIES', { count: total, max: MAX_COPIES });
  return numberedNames(prefix, total);
}
