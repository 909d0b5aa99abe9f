/**
 * Sixteen clients (from sixteen addresses) writing and reading several
 * databases at once get no 5xx: 15 s in the suite, which reproduced the old
 * failures every run; LOAD_SECONDS=60 for the longer soak.
 * Two causes of 500s under this load are gone: calls handed to an engine
 * process on its way out of the pool ([SQ9007]), and reads that met a lock
 * another process held for a moment ([SQ9006]). Loopback only, bounded in
 * time (the longer run belongs to npm run bench).
 */
import path from 'node:path';
import t from 'tap';
import { closeClients, postFrom } from './helpers/clients';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 15);
t.setTimeout((SECONDS + 90) * 1000);

const CLIENTS = 16;
const DATABASES = 4;

t.test(`${CLIENTS} clients for ${SECONDS} s: no 5xx`, async (t) => {
  const dir = scratchDir(t);
  const server = await startServer(
    ['-dir', path.join(dir, 'data'), '-log-file', path.join(dir, 'journal', 'statements.jsonl')],
    { cwd: dir },
  );
  t.teardown(() => (closeClients(), server.stop()));
  // Created at once, from as many clients: creation takes part in the load too.
  const created = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => server.post('/dbs', { db: `d${i}` })));
  t.same(
    created.map((r) => r.status),
    created.map(() => 201),
    'every database created',
  );
  for (let i = 0; i < DATABASES; i++) t.equal((await server.exec(`d${i}`, 'CREATE TABLE t (x INT)')).status, 200);

  const answers = new Map<string, number>();
  const faults: string[] = [];
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = 0; Date.now() < end; n++) {
        const db = `d${(client + n) % DATABASES}`;
        const from = `127.0.0.${10 + client}`;
        const body =
          client % 2 === 0
            ? { db, sql: 'INSERT INTO t VALUES (?)', params: [n] }
            : { db, sql: 'SELECT count(*), max(x) FROM t' };
        const reply = await postFrom(server, { from, body });
        const key = `${reply.status}${reply.body?.code === undefined ? '' : ` ${reply.body.code}`}`;
        answers.set(key, (answers.get(key) ?? 0) + 1);
        if (reply.status >= 500) faults.push(reply.text.slice(0, 200));
      }
    }),
  );
  t.same(faults.slice(0, 5), [], `no 5xx (answers: ${JSON.stringify(Object.fromEntries(answers))})`);
  t.ok((answers.get('200') ?? 0) > CLIENTS * 10, 'the clients were served throughout');
});
