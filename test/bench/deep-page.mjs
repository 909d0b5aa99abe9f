/**
 * The deep-page scenario (BENCH_ONLY=deep-page): GET /rows on a table of
 * 1,000,000 rows, its first page against its last page by offset and by
 * cursor. An offset page makes SQLite step over every row before it; a
 * cursor page searches the key, so the last page should cost about what the
 * first does (target: last by cursor <= 2x first).
 *
 * The cursor is the server's own: the `next` of the page just before the
 * last, asked for by offset, which is how a client that switches from
 * offset to cursor would come by it. Since offset pages seek to where earlier
 * pages ended (src/engine/rows/offset-seeks.ts), that page also leads the
 * last page by offset of a one-term key to its start.
 */
import path from 'node:path';
import { ok, request, startSqlscribe } from './processes.mjs';
import { buildDeepPage, DEEP_ROWS } from './fixtures.mjs';

const LIMIT = 100;
const REPEATS = 21;

function median(values) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

const WARM_UPS = 5;

async function get(url, pathAndQuery) {
  const reply = await request(url, 'GET', pathAndQuery);
  if (reply.status !== 200)
    throw new Error(`${pathAndQuery}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
  return reply;
}

/**
 * Median ms of each request, asked in turns so that a drift in the
 * machine's load weighs on all alike. Warm-ups first, in turns too: each
 * engine process keeps its own count of the table's rows, and the first
 * request that reaches one pays for count(*), which no page should carry.
 */
async function timedInTurns(url, paths) {
  for (let i = 0; i < WARM_UPS; i++) for (const pathAndQuery of paths) await get(url, pathAndQuery);
  const times = paths.map(() => []);
  const bodies = [];
  for (let i = 0; i < REPEATS; i++) {
    for (const [j, pathAndQuery] of paths.entries()) {
      const reply = await get(url, pathAndQuery);
      times[j].push(reply.ms);
      bodies[j] = reply.body;
    }
  }
  return paths.map((_, j) => ({ ms: median(times[j]), body: bodies[j] }));
}

/** First, last by offset, last by cursor, for one table; checks that both last pages hold the same rows. */
async function table(url, name) {
  const rows = (query) => `/rows?db=deep&table=${name}&limit=${LIMIT}${query}`;
  const deepest = DEEP_ROWS - LIMIT;
  const before = await ok(url, 'GET', rows(`&offset=${deepest - LIMIT}`));
  const cursor = before.body.next;
  if (typeof cursor !== 'string') throw new Error(`${name}: the page before the last has no next`);
  const [first, byOffset, byCursor] = await timedInTurns(url, [
    rows('&offset=0'),
    rows(`&offset=${deepest}`),
    rows(`&after=${cursor}`),
  ]);
  const same =
    JSON.stringify(byCursor.body.rows) === JSON.stringify(byOffset.body.rows) && byOffset.body.rows.length === LIMIT;
  return {
    table: name,
    first: first.ms,
    lastByOffset: byOffset.ms,
    lastByCursor: byCursor.ms,
    ratio: byCursor.ms / first.ms,
    same,
  };
}

export async function deepPage(work) {
  const dir = path.join(work, 'deep-page');
  const built = performance.now();
  buildDeepPage(dir);
  const buildMs = performance.now() - built;
  const server = await startSqlscribe(dir, ['-query-timeout', '60s']);
  try {
    return {
      buildMs,
      limit: LIMIT,
      repeats: REPEATS,
      tables: [await table(server.url, 'deep'), await table(server.url, 'deep_pair')],
    };
  } finally {
    await server.stop();
  }
}
