/** An ExecRequest of one statement for an Engine in the test's own process, with a fixed clock and seed. */
import { classifyStatement } from '../../src/engine/dialect/classify';
import type { ExecRequest } from '../../src/engine/protocol';

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
