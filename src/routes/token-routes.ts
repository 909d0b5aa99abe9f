/**
 * POST /tokens, GET /tokens, DELETE /tokens/{id}: personal tokens (admin
 * only). The answer to POST holds each secret once, as JSON or, with
 * `Accept: text/csv` or `?format=csv`, as CSV to print on cards.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import type { CreatedToken } from '../tokens/token-registry';
import { queryValue } from './request/query';

function wantsCsv(ctx: Context): boolean {
  const format = queryValue(ctx, 'format');
  return format === 'csv' || (format === undefined && ctx.get('Accept').includes('text/csv'));
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * Lines end in LF, not RFC 4180's CRLF: a teacher cuts a secret out of the
 * file with grep and cut, and the CR left at its end made curl send a broken
 * header. Spreadsheets and RFC 4180 readers take LF lines as well.
 */
export function tokensCsv(tokens: readonly CreatedToken[]): string {
  const rows = tokens.map((token) => [token.name, token.databases.join(' '), token.secret].map(csvField).join(','));
  return ['name,database,secret', ...rows].join('\n') + '\n';
}

export function tokenRoutes(router: Router, bus: CommandBus): void {
  router.post('/tokens', async (ctx) => {
    const created = await bus.dispatch({ type: 'create-tokens', body: ctx.request.body }, callOf(ctx));
    // The only time the secrets exist outside their holders: no cache may keep them.
    ctx.set('Cache-Control', 'no-store');
    if (!wantsCsv(ctx)) return sendJson(ctx, 201, { ok: true, ...created });
    ctx.status = 201;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.body = tokensCsv(created.tokens);
  });

  router.get('/tokens', async (ctx) => {
    sendJson(ctx, 200, { ok: true, ...(await bus.dispatch({ type: 'list-tokens' }, callOf(ctx))) });
  });

  router.delete('/tokens/:id', async (ctx) => {
    const revoked = await bus.dispatch({ type: 'revoke-token', id: ctx.params.id ?? '' }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, revoked: revoked.token });
  });
}
