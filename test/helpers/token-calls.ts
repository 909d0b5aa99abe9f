/**
 * Requests a test sends as one token's holder (Authorization: Bearer), to a
 * server started with tokens: the raw call, the call that must succeed, the
 * rows of one statement, and a new token's secret.
 */
import type { Reply, TestServer } from './server';

/** The header that sends a request as the holder of `secret`. */
export const as = (secret: string): Record<string, string> => ({ Authorization: `Bearer ${secret}` });

export function call(server: TestServer, secret: string, method: string, url: string, body?: unknown): Promise<Reply> {
  return server.request(method, url, body === undefined ? { headers: as(secret) } : { body, headers: as(secret) });
}

/** A call that must succeed: any status of 300 or more throws, with the reply's start. */
export async function ok(
  server: TestServer,
  secret: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<Reply> {
  const reply = await call(server, secret, method, url, body);
  if (reply.status >= 300)
    throw new Error(`${method} ${url} ${JSON.stringify(body)}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return reply;
}

/** The rows of one statement run on `db` (POST /exec). */
export async function rows(server: TestServer, secret: string, db: string, sql: string): Promise<unknown[][]> {
  return (await ok(server, secret, 'POST', '/exec', { db, sql })).body.results[0].rows;
}

/** The secret of a token the admin (`adminSecret`) makes (POST /tokens). */
export async function tokenSecret(
  server: TestServer,
  adminSecret: string,
  name: string,
  role: string,
  databases: string[],
): Promise<string> {
  return (await ok(server, adminSecret, 'POST', '/tokens', { name, role, databases })).body.tokens[0].secret as string;
}
