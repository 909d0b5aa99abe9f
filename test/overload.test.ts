/**
 * Ten times -max-connections at once: the clients over the ceiling get a fast
 * 503 with Retry-After, never a 500, and every client that retries is
 * served. Loopback only; each client retries a bounded number of times.
 */
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(90_000);

const MAX = 16;
const CLIENTS = 10 * MAX;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  text: string;
}

/** One request on a connection of its own, closed after the answer. */
function once(url: URL, body: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const payload = Buffer.from(JSON.stringify(body));
    const headers = { 'content-type': 'application/json', 'content-length': payload.length, connection: 'close' };
    const request = http.request(
      { host: url.hostname, port: url.port, method: 'POST', path: '/exec', agent: false, headers },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], text }));
      },
    );
    request.on('error', (error) => resolve({ status: 0, retryAfter: undefined, text: error.message }));
    request.end(payload);
  });
}

t.test(
  `${CLIENTS} clients against -max-connections ${MAX}: fast 503s, no 500, every retrying client served`,
  async (t) => {
    const dir = scratchDir(t);
    const server = await startServer(['-dir', path.join(dir, 'data'), '-max-connections', String(MAX)], { cwd: dir });
    t.teardown(() => server.stop());
    t.equal((await server.post('/dbs', { db: 'o' })).status, 201);
    t.equal((await server.exec('o', 'CREATE TABLE t (x INT)')).status, 200);
    const url = new URL(server.url);
    const counts = new Map<number, number>();
    const faults: string[] = [];
    let refusedWithoutRetryAfter = 0;
    const served = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        for (let attempt = 0; attempt < 100; attempt++) {
          const answer = await once(url, {
            db: 'o',
            sql: i % 2 === 0 ? 'INSERT INTO t VALUES (?)' : 'SELECT count(*) FROM t',
            ...(i % 2 === 0 ? { params: [i] } : {}),
          });
          counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
          if (answer.status === 200) return true;
          if (answer.status === 503 && answer.retryAfter === undefined) refusedWithoutRetryAfter++;
          if (answer.status !== 503) faults.push(`${answer.status} ${answer.text.slice(0, 200)}`);
          await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
        }
        return false;
      }),
    );
    t.equal(
      served.filter(Boolean).length,
      CLIENTS,
      `every client was served (answers: ${JSON.stringify(Object.fromEntries(counts))})`,
    );
    t.same(faults.slice(0, 5), [], 'nothing but 200 and 503');
    t.equal(refusedWithoutRetryAfter, 0, 'every 503 says when to retry');
    const count = await server.exec('o', 'SELECT count(*) AS n FROM t');
    t.equal(Number(count.body.results[0].rows[0][0]), CLIENTS / 2, 'every insert that was answered 200 is there');
  },
);
