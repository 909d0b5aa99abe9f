/**
 * One statement-running helper for the HTTP suites, so that a setup step which
 * must succeed fails the same way, with the same label, in every file.
 */
import type { Test } from 'tap';
import type { TestServer } from './server';

/**
 * Runs `sql` on `db` through POST /exec and asserts that it succeeded (status
 * 200, `ok: true`); returns the per-statement results (empty when it failed,
 * so the caller's own assertions fail next rather than throwing).
 */
export async function execOk<R = any>(
  tt: Test,
  server: TestServer,
  db: string | undefined,
  sql: string,
  extra: Record<string, unknown> = {},
): Promise<R[]> {
  const reply = await server.exec(db, sql, extra);
  const label = sql.trim().slice(0, 200);
  tt.equal(reply.status, 200, `${label} → ${reply.text.slice(0, 300)}`);
  tt.equal(reply.body?.ok, true, `${label}: ok`);
  return (reply.body?.results ?? []) as R[];
}
