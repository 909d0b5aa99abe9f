/**
 * Every engine sees every schema change at once. Each engine process keeps
 * its own connection, prepared statements and schema facts; after one process
 * changes the schema, the next request may land on another that read the
 * database before. Here consecutive steps are made to land on different
 * processes (the host gives a call to the first idle process, so keeping the
 * first k busy with slow reads on another database sends the step to the
 * k+1-th), and every answer — of /exec, /tables, /schema and /rows — is
 * compared with what one plain better-sqlite3 connection answers for the same
 * statements on a copy of the database.
 *
 * Views and triggers are part of the sequence: a process that kept a view's
 * columns, or prepared a write before a trigger was made or dropped, would
 * answer differently from the plain connection.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { startServer, type TestServer } from './helpers/server';
import { sleep } from './helpers/wait';
import { scratchDir } from './helpers/scratch-dir';

// 23 steps a round, each behind up to three slow reads: minutes on a loaded machine.
t.setTimeout(300_000);

const ENGINE_PROCESSES = 4;
/** About 100 ms of work on an idle machine: a process stays busy while a step's first requests are handed out (a read that ends sooner sends a request to a lower process: another order, never a wrong answer). */
const SLOW_READ =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 500000) SELECT count(*) FROM c';

type Outcome = { ok: true; columns: string[]; rows: unknown[][] } | { ok: false };

interface TableShape {
  name: string;
  kind: string;
  columns: string[];
  pk: string[];
  indexes: string[];
}

/** The same questions asked of one plain connection. */
class Reference {
  constructor(private readonly db: Database.Database) {}

  exec(sql: string): Outcome {
    try {
      const statement = this.db.prepare(sql);
      if (!statement.reader) {
        statement.run();
        return { ok: true, columns: [], rows: [] };
      }
      const rows = statement.raw(true).all() as unknown[][];
      return { ok: true, columns: statement.columns().map((column) => column.name), rows };
    } catch {
      return { ok: false };
    }
  }

  tables(): TableShape[] {
    const sql =
      "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_sqlscribe%' ESCAPE '\\' ORDER BY name";
    const objects = this.db.prepare(sql).all() as Array<{ type: string; name: string }>;
    return objects.map((object) => this.table(object.name, object.type));
  }

  table(name: string, kind: string): TableShape {
    const columns = this.db.prepare('SELECT name, pk FROM pragma_table_xinfo(?) ORDER BY cid').all(name) as Array<{
      name: string;
      pk: number;
    }>;
    const indexes = this.db
      .prepare("SELECT name FROM pragma_index_list(?) WHERE origin = 'c' ORDER BY name")
      .pluck()
      .all(name) as string[];
    const pk = columns
      .filter((column) => column.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((column) => column.name);
    return { name, kind, columns: columns.map((column) => column.name), pk, indexes };
  }

  rows(name: string, order: string): { total: number; columns: string[]; rows: unknown[][] } {
    const total = this.db.prepare(`SELECT count(*) FROM "${name}"`).pluck().get() as number;
    // A view is read in its own order, as /rows reads it.
    const page = this.db.prepare(`SELECT * FROM "${name}"${order === '' ? '' : ` ORDER BY ${order}`} LIMIT 100`);
    return { total, columns: page.columns().map((column) => column.name), rows: page.raw(true).all() as unknown[][] };
  }
}

function shapeOf(record: any): TableShape {
  const columns = (record.columns as Array<{ name: string; pk: boolean }>) ?? [];
  return {
    name: record.name,
    kind: record.kind,
    columns: columns.map((column) => column.name),
    pk: record.primaryKey === '' ? [] : String(record.primaryKey).split(','),
    indexes: ((record.indexes as Array<{ name: string }>) ?? []).map((index) => index.name).sort(),
  };
}

/** DDL and the statements that depend on it, round after round, so that every process has seen an older schema. */
function sequence(round: number): string[] {
  const other = round % 2 === 1;
  return [
    'DROP VIEW IF EXISTS v',
    'DROP TABLE IF EXISTS t',
    other ? 'CREATE TABLE t (id INT PRIMARY KEY, y TEXT, x INT)' : 'CREATE TABLE t (id INT PRIMARY KEY, x INT)',
    'CREATE INDEX i ON t (x)',
    other ? 'CREATE VIEW v AS SELECT id, y, x FROM t' : 'CREATE VIEW v AS SELECT id, x FROM t',
    other
      ? "INSERT INTO t (id, y, x) VALUES (1, 'a', 10), (2, 'b', 20)"
      : 'INSERT INTO t (id, x) VALUES (1, 10), (2, 20)',
    'SELECT * FROM v ORDER BY id',
    'SELECT * FROM t ORDER BY id',
    'SELECT * FROM t WHERE id = 1',
    `ALTER TABLE t ADD COLUMN z${round} TEXT`,
    'SELECT * FROM t ORDER BY id',
    'CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET x = x + 1 WHERE id = new.id; END',
    `INSERT INTO t (id, x, z${round}) VALUES (3, 30, 'c')`,
    'SELECT * FROM t WHERE id = 3',
    'DROP TRIGGER tr',
    'INSERT INTO t (id, x) VALUES (4, 40)',
    'SELECT * FROM t WHERE id = 4',
    'DROP VIEW v',
    `CREATE VIEW v AS SELECT id, z${round} FROM t`,
    'SELECT * FROM v ORDER BY id',
    'DROP INDEX i',
    `CREATE INDEX i ON t (z${round})`,
    `SELECT id, x FROM t WHERE z${round} = 'c'`,
    'SELECT y FROM t',
  ];
}

/** Starts `busy` slow reads, so that the next call goes to process number busy + 1. */
async function occupy(server: TestServer, busy: number): Promise<Promise<unknown>[]> {
  const reads = Array.from({ length: busy }, () => server.exec('busy', SLOW_READ));
  // Let them reach their processes before the step's own request.
  if (busy > 0) await sleep(40);
  return reads;
}

t.test(
  "DDL and the statements that depend on it give a single connection's answers on every engine process",
  async (tt) => {
    const dir = scratchDir(tt);
    const dataDir = path.join(dir, 'data');
    const server = await startServer(
      ['-dir', dataDir, '-log-file', path.join(dir, 'journal'), '-query-timeout', '20s'],
      { cwd: dir },
    );
    tt.teardown(async () => {
      await server.stop();
    });
    for (const name of ['busy', 'work'])
      tt.equal((await server.post('/dbs', { db: name })).status, 201, `POST /dbs ${name}`);
    // Every process reads the database once, and all four are started.
    await Promise.all(
      Array.from({ length: ENGINE_PROCESSES }, () => server.exec('work', 'SELECT count(*) FROM sqlite_schema')),
    );
    await Promise.all(Array.from({ length: ENGINE_PROCESSES }, () => server.exec('busy', SLOW_READ)));

    const live = new Database(path.join(dataDir, 'work.db'), { readonly: true });
    const copy = path.join(dir, 'reference.db');
    live.exec(`VACUUM INTO '${copy}'`);
    live.close();
    const reference = new Reference(new Database(copy));

    const started = Date.now();
    let step = 0;
    let mismatches = 0;
    for (let round = 0; round < 3; round++) {
      for (const sql of sequence(round)) {
        const busy = step++ % ENGINE_PROCESSES;
        const reads = await occupy(server, busy);
        const label = `round ${round}, ${busy} busy: ${sql}`;
        const reply = await server.exec('work', sql);
        const expected = reference.exec(sql);
        const got: Outcome =
          reply.body?.ok === true
            ? { ok: true, columns: reply.body.results[0].columns, rows: reply.body.results[0].rows }
            : { ok: false };
        if (!tt.strictSame(got, expected, `${label} → ${reply.text.slice(0, 200)}`)) mismatches++;

        const tables = await server.get('/tables?db=work');
        if (!tt.strictSame((tables.body?.tables ?? []).map(shapeOf), reference.tables(), `${label}: /tables`))
          mismatches++;
        const schema = await server.get('/schema?db=work&table=t');
        const table = reference.tables().find((candidate) => candidate.name === 't');
        if (
          !tt.strictSame(
            schema.body?.table === undefined ? undefined : shapeOf(schema.body.table),
            table,
            `${label}: /schema`,
          )
        )
          mismatches++;
        if (table !== undefined) {
          const rows = await server.get('/rows?db=work&table=t&limit=100');
          const page = { total: rows.body?.total, columns: rows.body?.columns, rows: rows.body?.rows };
          if (
            !tt.strictSame(
              page,
              reference.rows('t', table.pk.map((name) => `"${name}"`).join(', ') || 'rowid'),
              `${label}: /rows`,
            )
          )
            mismatches++;
        }
        if (reference.tables().some((candidate) => candidate.name === 'v')) {
          const viewSchema = await server.get('/schema?db=work&table=v');
          if (
            !tt.strictSame(
              shapeOf(viewSchema.body?.table ?? {}),
              reference.table('v', 'view'),
              `${label}: /schema of the view`,
            )
          )
            mismatches++;
          // A view without ORDER BY comes in its query plan's order, which here differs (the copy's
          // `id INT PRIMARY KEY` is no rowid alias): compare its rows as a set.
          const rows = await server.get('/rows?db=work&table=v&limit=100');
          const sorted = (list: unknown[][] | undefined): string[] =>
            (list ?? []).map((row) => JSON.stringify(row)).sort();
          const expectedView = reference.rows('v', '');
          const page = { total: rows.body?.total, columns: rows.body?.columns, rows: sorted(rows.body?.rows) };
          if (!tt.strictSame(page, { ...expectedView, rows: sorted(expectedView.rows) }, `${label}: /rows of the view`))
            mismatches++;
        }
        for (const read of await Promise.all(reads))
          tt.equal((read as { status: number }).status, 200, 'the slow read that kept a process busy');
      }
    }
    tt.equal(
      mismatches,
      0,
      `every answer equal to a single connection's (${step} steps in ${Date.now() - started} ms)`,
    );
  },
);
