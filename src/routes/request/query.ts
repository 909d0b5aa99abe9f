/** Reading the query string: one value per name, validated. */
import type { Context } from 'koa';
import { EngineError } from '../../errors';

export function queryValue(ctx: Context, name: string): string | undefined {
  // Most requests have no query string: nothing to parse.
  if (ctx.querystring === '') return undefined;
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new EngineError('INVALID_QUERY_PARAMETER', { name, detail: 'given more than once' });
  return value;
}

export function requiredQueryValue(ctx: Context, name: string): string {
  const value = queryValue(ctx, name);
  if (value === undefined || value === '')
    throw new EngineError('INVALID_QUERY_PARAMETER', { name, detail: 'required' });
  return value;
}

/** A non-negative integer, or the default when absent. */
export function countQueryValue(ctx: Context, name: string, fallback: number): number {
  const value = queryValue(ctx, name);
  if (value === undefined) return fallback;
  if (!/^\d{1,15}$/.test(value))
    throw new EngineError('INVALID_QUERY_PARAMETER', { name, detail: 'expected a non-negative integer' });
  return Number(value);
}
