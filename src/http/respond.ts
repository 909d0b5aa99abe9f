/** Writing JSON bodies: every response of the service goes through here. */
import type { Context } from 'koa';
import { stringifyJson } from './json';

export function sendJson(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = stringifyJson(body);
}
