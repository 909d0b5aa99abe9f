/**
 * The body of POST /exec: `{ sql }`, `{ sql, params }` or
 * `{ statements: [{ sql, params? }, …] }`, each with an optional `db`.
 */
import { EngineError } from '../../errors';
import type { SqlSource } from '../../engine/batch';
import type { SqlParams } from '../../engine/protocol';

function badRequest(detail: string): EngineError {
  return new EngineError('BAD_REQUEST', { detail });
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function readParams(value: unknown, where: string): SqlParams | undefined {
  if (value === undefined) return undefined;
  const values = Array.isArray(value)
    ? value
    : typeof value === 'object' && value !== null
      ? Object.values(value)
      : undefined;
  if (values === undefined) throw badRequest(`${where}params must be an array or an object`);
  if (!values.every(isScalar))
    throw new EngineError('PARAMETER_MISMATCH', {
      detail: `${where}parameter values must be strings, numbers, booleans or null`,
    });
  return value as SqlParams;
}

function readSource(value: unknown, where: string): SqlSource {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badRequest(`${where}must be an object with "sql"`);
  const { sql, params } = value as Record<string, unknown>;
  if (typeof sql !== 'string') throw badRequest(`${where}"sql" must be a string`);
  const parsed = readParams(params, where);
  return parsed === undefined ? { sql } : { sql, params: parsed };
}

export function readExecBody(body: Record<string, unknown> | undefined): SqlSource[] {
  const { sql, statements } = body ?? {};
  if (sql !== undefined && statements !== undefined) throw badRequest('send either "sql" or "statements", not both');
  if (statements !== undefined) {
    if (!Array.isArray(statements)) throw badRequest('"statements" must be an array');
    return statements.map((item, index) => readSource(item, `statements[${index}]: `));
  }
  if (sql === undefined) throw badRequest('"sql" is required');
  return [readSource(body, '')];
}
