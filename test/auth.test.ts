/**
 * The token check accepts the token exactly — by header or Bearer — and
 * nothing near it: a prefix, a longer text that starts with it, the same
 * bytes padded with NUL, another character of the same byte length.
 */
import t from 'tap';
import type { Context } from 'koa';
import { authenticate } from '../src/http/bookkeeping/auth';
import { TokenRegistry } from '../src/tokens/token-registry';
import { EngineError } from '../src/errors';

const TOKEN = 's3cret-tökén';
/** A server with -token only: the admin token is the one secret. */
const check = authenticate(new TokenRegistry({ adminToken: TOKEN, fileTokens: null, state: null }));

async function answer(headers: Record<string, string>): Promise<string> {
  const ctx = {
    get: (name: string) => headers[name.toLowerCase()] ?? '',
    set: () => undefined,
    state: {},
  } as unknown as Context;
  try {
    await check(ctx, async () => undefined);
    return 'allowed';
  } catch (error) {
    if (error instanceof EngineError) return error.errorName;
    throw error;
  }
}

t.test('the token itself is let through, by either header', async (t) => {
  t.equal(await answer({ 'x-service-token': TOKEN }), 'allowed');
  t.equal(await answer({ authorization: `Bearer ${TOKEN}` }), 'allowed');
  t.equal(await answer({ authorization: `bearer   ${TOKEN}` }), 'allowed', 'the scheme in any case, spaces after it');
});

t.test('anything near the token is refused', async (t) => {
  const near = [
    '',
    's3cret',
    's3cret-tökén!',
    's3cret-tökénX'.slice(0, -1) + 'x',
    `${TOKEN}\0`,
    's3cret-tokenn',
    's3cret-tökéN',
    TOKEN.slice(0, -1),
  ];
  for (const presented of near)
    t.equal(await answer({ 'x-service-token': presented }), 'UNAUTHORIZED', JSON.stringify(presented));
  t.equal(await answer({}), 'UNAUTHORIZED', 'no token at all');
  t.equal(await answer({ authorization: `Basic ${TOKEN}` }), 'UNAUTHORIZED', 'another scheme');
});
