/**
 * The journal is an audit log: it keeps the SQL exactly as the client sent
 * it, comments and whitespace included, and replay rebuilds the same
 * databases from that text.
 */
import path from 'node:path';
import t from 'tap';
import { fileEntries } from './helpers/journal-files';
import { runReplay, startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(60_000);

const CREATE = `-- the lesson's table\n  CREATE TABLE pupils (\n    id INT PRIMARY KEY, -- one per pupil\n    name TEXT /* as written */\n  );   -- trailing note\n\n`;
const INSERTS = `INSERT INTO pupils VALUES (1, 'Ana');\t/* first */ INSERT INTO pupils VALUES (2, 'Luis -- not a comment'); -- the end`;
const SOURCES = [
  { sql: '  /* lead */ INSERT INTO pupils VALUES (3, ?) -- bound\n', params: ['Eva'] },
  { sql: 'UPDATE pupils SET name = upper(name) WHERE id = 3; ' },
];

t.test('SQL with comments round-trips byte-exact through the journal and replay', async (t) => {
  const dir = scratchDir(t);
  const journal = path.join(dir, 'journal', 'statements.jsonl');
  const server = await startServer(['-dir', path.join(dir, 'data'), '-log-file', journal], { cwd: dir });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'class' })).status, 201);
  t.equal((await server.exec('class', CREATE)).status, 200);
  t.equal((await server.exec('class', INSERTS)).status, 200);
  t.equal((await server.post('/exec', { db: 'class', statements: SOURCES })).status, 200);
  const failed = "INSERT INTO pupils VALUES (1, 'again') -- duplicate on purpose";
  t.equal((await server.exec('class', failed)).status, 400);
  t.equal(await server.stop(), 0);

  const execs = fileEntries(journal).filter((e) => e.kind === 'exec');
  t.same(
    execs.map((e) => e.sql),
    [CREATE, INSERTS, SOURCES.map((s) => s.sql).join('\n'), failed],
    'sql is the text sent, byte for byte',
  );
  t.same(execs[0]?.statements, [{ sql: CREATE }]);
  t.same(execs[1]?.statements, [{ sql: INSERTS }]);
  t.same(execs[2]?.statements, SOURCES, 'each source of a statements batch, with its parameters');
  t.equal(execs[3]?.ok, false);

  const out = path.join(dir, 'replayed');
  const run = await runReplay(['-log-file', journal, '-out', out, '-verify', path.join(dir, 'data')], dir);
  t.equal(run.code, 0, run.stderr);
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(path.join(out, 'class.db'), { readonly: true });
  t.teardown(() => db.close());
  t.same(db.prepare('SELECT id, name FROM pupils ORDER BY id').all(), [
    { id: 1, name: 'Ana' },
    { id: 2, name: 'Luis -- not a comment' },
    { id: 3, name: 'EVA' },
  ]);
  const schema = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'pupils'").pluck().get() as string;
  t.match(schema, /-- one per pupil/, 'comments inside a statement reach the schema');
  t.match(schema, /\/\* as written \*\//);
});
