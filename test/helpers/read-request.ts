/** Reads for an Engine in the test's own process: the request, and the check that the server's own read answers as the ordinary path does. */
import type { Test } from 'tap';
import { classifyStatement } from '../../src/engine/dialect/classify';
import { Engine } from '../../src/engine/engine';
import type { ExecRequest, StatementResult } from '../../src/engine/protocol';

/** An ExecRequest of one statement, with a fixed clock and seed. */
export function readRequest(file: string, sql: string, params?: unknown[], maxResultRows = 1000): ExecRequest {
  const { kind } = classifyStatement(sql);
  return {
    file,
    statements: [params === undefined ? { sql, kind } : { sql, kind, params: params as never }],
    maxResultRows,
    maxResultBytes: 10_000_000,
    context: { clockMs: 0, seed: '0123456789abcdef' },
  };
}

/**
 * Two engines on `file`, closed when `t` ends: `engine` reads in the
 * server's way (execBoundedRead), `other` the ordinary way. `readHere`
 * asserts that a statement is read in the server and answers what the
 * ordinary path answers, and gives the server's results.
 */
export function boundedReads(
  t: Test,
  file: string,
): { engine: Engine; readHere: (sql: string, params?: unknown[]) => StatementResult[] | undefined } {
  const engine = new Engine();
  const other = new Engine();
  t.teardown(() => {
    engine.close();
    other.close();
  });
  const readHere = (sql: string, params?: unknown[]): StatementResult[] | undefined => {
    const here = engine.execBoundedRead(readRequest(file, sql, params, 10_000));
    t.ok(here !== undefined, `read here: ${sql}`);
    t.strictSame(here, other.exec(readRequest(file, sql, params, 10_000)), `the ordinary path's answer: ${sql}`);
    return here;
  };
  return { engine, readHere };
}
