/**
 * Property: whatever a client does through the HTTP API, replaying the
 * journal rebuilds every database exactly.
 *
 * fast-check drives random workloads against one running server: tables of
 * four shapes, inserts of random ints (up to 64 bits), texts, NULL, booleans,
 * floats, random(), randomblob(), datetime('now') and friends, literals and
 * bound parameters; updates, deletes, ALTER TABLE ADD COLUMN, CREATE INDEX;
 * statements that must fail (duplicate key, type mismatch, unknown table, a
 * batch that fails half-way); bursts of concurrent writes, which the server
 * may run as one group; sessions committed and rolled back with
 * savepoints, ROLLBACK TO, RELEASE and failures inside. Each run uses fresh
 * databases; after it, the replay tool rebuilds everything from the journal
 * and `-verify <dataDir>` must exit 0.
 *
 * The server is shared by the runs, so a failure leaves a broken database
 * behind that every later run would also see: shrinking could not work and
 * the property stops at the first failure (endOnFailure). The seed is fixed
 * (override with SQLSCRIBE_PROPERTY_SEED) and printed by fast-check on failure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { runReplay as replay, startServer, type Reply, type TestServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(120_000);

const SEED = Number(process.env.SQLSCRIBE_PROPERTY_SEED ?? 20261121);
const NUM_RUNS = 15;

// ---------------------------------------------------------------------------------------------
// The model: tables, and statements built against them when a run executes
// ---------------------------------------------------------------------------------------------

type ColumnType = 'INT' | 'TEXT' | 'FLOAT' | 'BOOL';

interface Column {
  name: string;
  type: ColumnType;
  /** Key and unique columns get fresh values from the run's counter and are never updated. */
  role: 'key' | 'unique' | 'plain';
}

interface Table {
  name: string;
  columns: Column[];
}

const VARIANTS: Array<{ sql: (name: string) => string; columns: Column[] }> = [
  {
    sql: (n) =>
      `CREATE TABLE ${n} (id INT PRIMARY KEY, v TEXT, n INT, f FLOAT, b BOOL, ts TEXT DEFAULT CURRENT_TIMESTAMP)`,
    columns: [
      { name: 'id', type: 'INT', role: 'key' },
      { name: 'v', type: 'TEXT', role: 'plain' },
      { name: 'n', type: 'INT', role: 'plain' },
      { name: 'f', type: 'FLOAT', role: 'plain' },
      { name: 'b', type: 'BOOL', role: 'plain' },
    ],
  },
  {
    sql: (n) =>
      `CREATE TABLE ${n} (id INT PRIMARY KEY, u TEXT NOT NULL UNIQUE, r INT DEFAULT 0, made TEXT DEFAULT (datetime('now')))`,
    columns: [
      { name: 'id', type: 'INT', role: 'key' },
      { name: 'u', type: 'TEXT', role: 'unique' },
      { name: 'r', type: 'INT', role: 'plain' },
    ],
  },
  {
    sql: (n) => `CREATE TABLE ${n} (k TEXT PRIMARY KEY, n INT, f FLOAT) WITHOUT ROWID`,
    columns: [
      { name: 'k', type: 'TEXT', role: 'key' },
      { name: 'n', type: 'INT', role: 'plain' },
      { name: 'f', type: 'FLOAT', role: 'plain' },
    ],
  },
  {
    sql: (n) => `CREATE TABLE ${n} (v TEXT, n INT, b BOOL, at TEXT DEFAULT CURRENT_TIMESTAMP)`,
    columns: [
      { name: 'v', type: 'TEXT', role: 'plain' },
      { name: 'n', type: 'INT', role: 'plain' },
      { name: 'b', type: 'BOOL', role: 'plain' },
    ],
  },
];

/** Raw material for one value; the column's type decides what it becomes. */
interface ValueSeed {
  pick: number;
  int: number;
  big: bigint;
  text: string;
  float: number;
  bool: boolean;
  asParam: boolean;
}

const textArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('now', 'NOW', "it's", '', 'NULL', 'ä€😀', "'); DROP TABLE x; --", '2026-11-21 05:43:12'),
);

const valueSeedArb: fc.Arbitrary<ValueSeed> = fc.record({
  pick: fc.nat(),
  int: fc.integer(),
  big: fc.bigInt({ min: -(2n ** 63n) + 1n, max: 2n ** 63n - 1n }),
  text: textArb,
  float: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }),
  bool: fc.boolean(),
  asParam: fc.boolean(),
});

const quote = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** A value for a column: SQL text, plus the bound parameter when it is one. */
type Rendered = { sql: string; param?: string | number | boolean | null };

function render(type: ColumnType, seed: ValueSeed): Rendered {
  const options: Array<() => Rendered> = {
    INT: [
      () => (seed.asParam ? { sql: '?', param: seed.int } : { sql: String(seed.int) }),
      () => ({ sql: String(seed.big) }),
      () => ({ sql: 'NULL' }),
      () => ({ sql: 'random()' }),
      () => ({ sql: 'abs(random()) % 1000' }),
      () => ({ sql: "CAST(strftime('%s', 'now') AS INT)" }),
    ],
    TEXT: [
      () => (seed.asParam ? { sql: '?', param: seed.text } : { sql: quote(seed.text) }),
      () => ({ sql: 'NULL' }),
      () => ({ sql: "datetime('now')" }),
      () => ({ sql: "date('now', '+1 day')" }),
      () => ({ sql: 'hex(randomblob(8))' }),
      () => ({ sql: "'now'" }),
      () => ({ sql: 'CURRENT_TIMESTAMP' }),
    ],
    FLOAT: [
      () => (seed.asParam ? { sql: '?', param: seed.float } : { sql: String(seed.float) }),
      () => ({ sql: 'NULL' }),
      () => ({ sql: "julianday('now')" }),
      () => ({ sql: 'random() / 1e6' }),
      () => ({ sql: String(seed.int) }),
    ],
    BOOL: [
      () => (seed.asParam ? { sql: '?', param: seed.bool } : { sql: seed.bool ? 'TRUE' : 'FALSE' }),
      () => ({ sql: 'NULL' }),
      () => ({ sql: seed.bool ? '1' : '0' }),
      () => ({ sql: '(random() % 2 = 0)' }),
    ],
  }[type];
  return (options[seed.pick % options.length] as () => Rendered)();
}

/** A constant DEFAULT for ALTER TABLE ADD COLUMN (SQLite refuses others there). */
function constantDefault(type: ColumnType, seed: ValueSeed): string {
  switch (type) {
    case 'INT':
      return String(seed.int);
    case 'TEXT':
      return quote(seed.text);
    case 'FLOAT':
      return String(seed.float);
    case 'BOOL':
      return seed.bool ? 'TRUE' : 'FALSE';
  }
}

// What a run does, as generated; statements are built from it against the model at run time.
type WriteOp =
  | { kind: 'insert'; table: number; rows: ValueSeed[][] }
  | { kind: 'update'; table: number; column: number; value: ValueSeed; where: number }
  | { kind: 'delete'; table: number; where: number }
  | { kind: 'fail'; table: number; how: 'duplicate' | 'mismatch' | 'unknown-table' | 'half-batch'; seed: ValueSeed[] };

type SessionStep =
  | WriteOp
  | { kind: 'savepoint' }
  | { kind: 'rollback-to'; target: number }
  | { kind: 'release'; target: number }
  | { kind: 'read'; table: number };

type Op =
  | WriteOp
  | { kind: 'create-table'; variant: number }
  | { kind: 'add-column'; table: number; type: ColumnType; withDefault: boolean; seed: ValueSeed }
  | { kind: 'create-index'; table: number; column: number; unique: boolean }
  | { kind: 'read'; table: number }
  | { kind: 'session'; commit: boolean; steps: SessionStep[] }
  /** Writes sent at the same time, to both databases: the server may group them into one transaction. */
  | { kind: 'burst'; writes: Array<{ db: 0 | 1; op: WriteOp }> };

interface Step {
  db: 0 | 1;
  op: Op;
}

const tableIndex = fc.nat({ max: 20 });
const rowArb = fc.array(valueSeedArb, { minLength: 8, maxLength: 8 });

const writeOpArb: fc.Arbitrary<WriteOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('insert' as const),
      table: tableIndex,
      rows: fc.array(rowArb, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      table: tableIndex,
      column: fc.nat(),
      value: valueSeedArb,
      where: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), table: tableIndex, where: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('fail' as const),
      table: tableIndex,
      how: fc.constantFrom('duplicate' as const, 'mismatch' as const, 'unknown-table' as const, 'half-batch' as const),
      seed: rowArb,
    }),
  },
);

const sessionStepArb: fc.Arbitrary<SessionStep> = fc.oneof(
  { weight: 5, arbitrary: writeOpArb },
  { weight: 2, arbitrary: fc.constant({ kind: 'savepoint' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rollback-to' as const), target: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), target: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('read' as const), table: tableIndex }) },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: writeOpArb },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('create-table' as const), variant: fc.nat({ max: VARIANTS.length - 1 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('add-column' as const),
      table: tableIndex,
      type: fc.constantFrom<ColumnType>('INT', 'TEXT', 'FLOAT', 'BOOL'),
      withDefault: fc.boolean(),
      seed: valueSeedArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('create-index' as const),
      table: tableIndex,
      column: fc.nat(),
      unique: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('read' as const), table: tableIndex }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('session' as const),
      commit: fc.boolean(),
      steps: fc.array(sessionStepArb, { minLength: 1, maxLength: 8 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      writes: fc.array(fc.record({ db: fc.constantFrom<0 | 1>(0, 1), op: writeOpArb }), { minLength: 2, maxLength: 8 }),
    }),
  },
);

const workloadArb = fc.record({
  firstTables: fc.tuple(fc.nat({ max: VARIANTS.length - 1 }), fc.nat({ max: VARIANTS.length - 1 })),
  steps: fc.array(fc.record({ db: fc.constantFrom<0 | 1>(0, 1), op: opArb }), { minLength: 5, maxLength: 20 }),
});

// ---------------------------------------------------------------------------------------------
// Running a workload
// ---------------------------------------------------------------------------------------------

type Param = string | number | boolean | null;

/** One request's statements, with what the model expects of it. */
interface Planned {
  statements: Array<{ sql: string; params?: Param[] }>;
  expect: 'ok' | 'fail';
}

function one(sql: string, expect: 'ok' | 'fail', params: Param[] = []): Planned {
  return { statements: [params.length > 0 ? { sql, params } : { sql }], expect };
}

class Run {
  private counter = 0;
  readonly tables: [Table[], Table[]] = [[], []];
  /** Savepoints open in the current session. */
  private savepoints: string[] = [];

  constructor(
    readonly dbs: [string, string],
    private readonly server: TestServer,
    readonly log: string[],
  ) {}

  private fresh(): number {
    return ++this.counter;
  }

  private table(db: 0 | 1, index: number): Table | undefined {
    const tables = this.tables[db];
    return tables.length === 0 ? undefined : tables[index % tables.length];
  }

  createTable(db: 0 | 1, variant: number): Planned {
    const name = `t${this.fresh()}`;
    const shape = VARIANTS[variant] as (typeof VARIANTS)[number];
    this.tables[db].push({ name, columns: shape.columns.map((c) => ({ ...c })) });
    return one(shape.sql(name), 'ok');
  }

  /** A row for `table`: fresh key and unique values, the rest from the seeds. */
  private row(table: Table, seeds: ValueSeed[], params: Param[]): { columns: string[]; values: string[] } {
    const columns: string[] = [];
    const values: string[] = [];
    for (const [i, column] of table.columns.entries()) {
      const seed = seeds[i % seeds.length] as ValueSeed;
      columns.push(column.name);
      if (column.role !== 'plain') {
        const n = this.fresh();
        values.push(column.type === 'INT' ? String(n) : quote(`${column.name}${n}-${seed.text}`));
        continue;
      }
      const rendered = render(column.type, seed);
      if (rendered.param !== undefined) params.push(rendered.param);
      values.push(rendered.sql);
    }
    return { columns, values };
  }

  private condition(table: Table, where: number): string {
    const plain = table.columns.filter((c) => c.role === 'plain');
    const column = plain[where % Math.max(1, plain.length)];
    const choices = ['1 = 1', ...(column ? [`${column.name} IS NULL`, `${column.name} IS NOT NULL`] : [])];
    const keyed = table.columns.find((c) => c.role === 'key' && c.type === 'INT');
    if (keyed) choices.push(`${keyed.name} % 3 = ${where % 3}`);
    return choices[where % choices.length] as string;
  }

  write(db: 0 | 1, op: WriteOp): Planned | undefined {
    const table = this.table(db, op.table);
    if (!table) return undefined;
    switch (op.kind) {
      case 'insert': {
        const params: Param[] = [];
        const rows = op.rows.map((seeds) => this.row(table, seeds, params));
        const columns = (rows[0] as { columns: string[] }).columns;
        return one(
          `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES ${rows.map((r) => `(${r.values.join(', ')})`).join(', ')}`,
          'ok',
          params,
        );
      }
      case 'update': {
        const plain = table.columns.filter((c) => c.role === 'plain');
        if (plain.length === 0) return undefined;
        const column = plain[op.column % plain.length] as Column;
        const rendered = render(column.type, op.value);
        return one(
          `UPDATE ${table.name} SET ${column.name} = ${rendered.sql} WHERE ${this.condition(table, op.where)}`,
          'ok',
          rendered.param !== undefined ? [rendered.param] : [],
        );
      }
      case 'delete':
        return one(`DELETE FROM ${table.name} WHERE ${this.condition(table, op.where)}`, 'ok');
      case 'fail':
        return this.failing(table, op);
    }
  }

  private failing(table: Table, op: Extract<WriteOp, { kind: 'fail' }>): Planned {
    const params: Param[] = [];
    const { columns, values } = this.row(table, op.seed, params);
    const insert = {
      sql: `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${values.join(', ')})`,
      ...(params.length > 0 ? { params } : {}),
    };
    const intColumn = table.columns.findIndex((c) => c.type === 'INT' && c.role === 'plain');
    const hasKey = table.columns.some((c) => c.role !== 'plain');
    const how = op.how === 'duplicate' && !hasKey ? 'mismatch' : op.how;
    switch (how) {
      case 'duplicate':
        // The same row twice in one batch: the second repeats the key. Nothing of the batch stays.
        return { statements: [insert, insert], expect: 'fail' };
      case 'mismatch': {
        if (intColumn < 0) return one(`INSERT INTO no_such_table_${this.fresh()} VALUES (1)`, 'fail');
        // A valid row of literals but for one INT column, which gets text.
        const literal = this.row(
          table,
          op.seed.map((seed) => ({ ...seed, asParam: false })),
          [],
        );
        const bad = literal.values.map((value, i) =>
          i === intColumn ? `'not a number ' || ${quote((op.seed[0] as ValueSeed).text)}` : value,
        );
        return one(`INSERT INTO ${table.name} (${literal.columns.join(', ')}) VALUES (${bad.join(', ')})`, 'fail');
      }
      case 'unknown-table':
        return one(`INSERT INTO no_such_table_${this.fresh()} VALUES (1)`, 'fail');
      case 'half-batch':
        // A good statement, then one that fails: the batch is rolled back whole.
        return { statements: [insert, { sql: `DELETE FROM no_such_table_${this.fresh()}` }], expect: 'fail' };
    }
  }

  async exec(db: 0 | 1, planned: Planned, session?: string): Promise<void> {
    const body: Record<string, unknown> =
      planned.statements.length === 1
        ? { ...(planned.statements[0] as Planned['statements'][number]) }
        : { statements: planned.statements };
    if (session === undefined) body['db'] = this.dbs[db];
    const reply = await this.server.request(
      'POST',
      '/exec',
      session === undefined ? { body } : { body, headers: { 'X-Service-Session': session } },
    );
    this.check(reply, planned, session);
  }

  private check(reply: Reply, planned: Planned, session?: string): void {
    const text = planned.statements
      .map((st) => `${st.sql}${st.params ? ` ${JSON.stringify(st.params)}` : ''}`)
      .join('; ');
    const where = `${session === undefined ? '' : `[session ${session}] `}${text}`;
    this.log.push(`${reply.status} ${where}`);
    if (planned.expect === 'ok' && reply.status !== 200)
      throw new Error(`expected success: ${where}\n→ ${reply.status} ${reply.text.slice(0, 300)}`);
    if (
      planned.expect === 'fail' &&
      !(reply.status >= 400 && reply.status < 500 && typeof reply.body?.code === 'number')
    ) {
      throw new Error(`expected an engine error: ${where}\n→ ${reply.status} ${reply.text.slice(0, 300)}`);
    }
  }

  async session(db: 0 | 1, commit: boolean, steps: SessionStep[]): Promise<void> {
    const begun = await this.server.post('/tx/begin', { db: this.dbs[db] });
    if (begun.status !== 200) throw new Error(`begin: ${begun.status} ${begun.text}`);
    const id = begun.body.session as string;
    this.savepoints = [];
    for (const step of steps) {
      const planned = this.sessionStep(db, step);
      if (planned) await this.exec(db, planned, id);
    }
    const ended = await this.server.post(`/tx/${commit ? 'commit' : 'rollback'}?session=${id}`);
    this.log.push(`${ended.status} ${commit ? 'COMMIT' : 'ROLLBACK'} ${id}`);
    if (ended.status !== 200) throw new Error(`${commit ? 'commit' : 'rollback'}: ${ended.status} ${ended.text}`);
  }

  private sessionStep(db: 0 | 1, step: SessionStep): Planned | undefined {
    switch (step.kind) {
      case 'savepoint': {
        const name = `sp${this.fresh()}`;
        this.savepoints.push(name);
        return one(`SAVEPOINT ${name}`, 'ok');
      }
      case 'rollback-to': {
        if (this.savepoints.length === 0) return undefined;
        const at = step.target % this.savepoints.length;
        const name = this.savepoints[at] as string;
        // ROLLBACK TO keeps the savepoint itself and drops the ones after it.
        this.savepoints = this.savepoints.slice(0, at + 1);
        return one(`ROLLBACK TO ${name}`, 'ok');
      }
      case 'release': {
        if (this.savepoints.length === 0) return undefined;
        const at = step.target % this.savepoints.length;
        const name = this.savepoints[at] as string;
        this.savepoints = this.savepoints.slice(0, at);
        return one(`RELEASE ${name}`, 'ok');
      }
      case 'read': {
        const table = this.table(db, step.table);
        return table ? one(`SELECT * FROM ${table.name}`, 'ok') : undefined;
      }
      default:
        return this.write(db, step);
    }
  }

  addColumn(db: 0 | 1, op: Extract<Op, { kind: 'add-column' }>): Planned | undefined {
    const table = this.table(db, op.table);
    if (!table) return undefined;
    const name = `c${this.fresh()}`;
    table.columns.push({ name, type: op.type, role: 'plain' });
    return one(
      `ALTER TABLE ${table.name} ADD COLUMN ${name} ${op.type}${op.withDefault ? ` DEFAULT ${constantDefault(op.type, op.seed)}` : ''}`,
      'ok',
    );
  }

  createIndex(db: 0 | 1, op: Extract<Op, { kind: 'create-index' }>): Planned | undefined {
    const table = this.table(db, op.table);
    if (!table) return undefined;
    const column = table.columns[op.column % table.columns.length] as Column;
    // A unique index only on a column whose values are unique already.
    const unique = op.unique && column.role !== 'plain';
    return one(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX ix${this.fresh()} ON ${table.name} (${column.name})`, 'ok');
  }
}

/** The '?' placeholders of generated SQL: those outside quoted texts (which may hold '?' of their own). */
function countParams(sql: string): number {
  let count = 0;
  let quoted = false;
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    else if (ch === '?' && !quoted) count++;
  }
  return count;
}

async function runWorkload(run: Run, workload: { firstTables: [number, number]; steps: Step[] }): Promise<void> {
  for (const db of [0, 1] as const) await run.exec(db, run.createTable(db, workload.firstTables[db]));
  for (const { db, op } of workload.steps) {
    switch (op.kind) {
      case 'create-table':
        await run.exec(db, run.createTable(db, op.variant));
        break;
      case 'add-column': {
        const planned = run.addColumn(db, op);
        if (planned) await run.exec(db, planned);
        break;
      }
      case 'create-index': {
        const planned = run.createIndex(db, op);
        if (planned) await run.exec(db, planned);
        break;
      }
      case 'read': {
        const table = run.tables[db][op.table % Math.max(1, run.tables[db].length)];
        if (table) await run.exec(db, one(`SELECT * FROM ${table.name}`, 'ok'));
        break;
      }
      case 'session':
        await run.session(db, op.commit, op.steps);
        break;
      case 'burst': {
        // Planned one after the other (the model's counter), sent all at once; each outcome is independent of the order.
        const planned = op.writes.flatMap((write) => {
          const p = run.write(write.db, write.op);
          return p ? [{ db: write.db, planned: p }] : [];
        });
        await Promise.all(planned.map((w) => run.exec(w.db, w.planned)));
        break;
      }
      default: {
        const planned = run.write(db, op);
        if (planned) await run.exec(db, planned);
      }
    }
  }
}

t.test('rebuilds every database exactly from the journal, whatever the workload', async (tt) => {
  // Not scratchDir(tt): its removal runs before this test's own teardown, while the server may still
  // write its applied-checkpoint into the journal directory, and a failed removal left the server running.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'journal-property-'));
  const data = path.join(dir, 'data');
  const journal = path.join(dir, 'journal', 'statements.jsonl');
  const server = await startServer(['-dir', data, '-log-file', journal], { cwd: dir });
  tt.teardown(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  let runs = 0;
  let statements = 0;
  const statuses = new Map<string, number>();
  const property = fc.asyncProperty(workloadArb, async (workload) => {
    const index = ++runs;
    const dbs: [string, string] = [`p${index}a`, `p${index}b`];
    for (const db of dbs) {
      const created = await server.post('/dbs', { db });
      if (created.status !== 201) throw new Error(`POST /dbs ${db}: ${created.status} ${created.text}`);
    }
    const log: string[] = [];
    const run = new Run([`${dbs[0]}.db`, `${dbs[1]}.db`], server, log);
    try {
      await runWorkload(run, workload as { firstTables: [number, number]; steps: Step[] });
    } catch (error) {
      throw new Error(`run ${index}: ${(error as Error).message}\nstatements so far:\n${log.join('\n')}`);
    }
    statements += log.length;
    for (const line of log) {
      const key = /^\d+ (COMMIT|ROLLBACK) [0-9a-f]{16}$/.test(line)
        ? (line.split(' ')[1] as string)
        : (line.split(' ')[0] as string);
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    const out = path.join(dir, `replayed-${index}`);
    const replayed = await replay(['-log-file', journal, '-out', out, '-verify', data], dir);
    if (replayed.code !== 0) {
      throw new Error(
        `run ${index}: replay -verify exited ${replayed.code}:\n${replayed.stderr}\nstatements of the run:\n${log.join('\n')}`,
      );
    }
  });
  await fc.assert(property, { numRuns: NUM_RUNS, seed: SEED, endOnFailure: true });
  tt.equal(runs, NUM_RUNS, `${NUM_RUNS} workloads (seed ${SEED}), ${statements} requests, each replayed with -verify`);
  tt.comment(`answers: ${[...statuses].map(([key, count]) => `${key} ×${count}`).join(', ')}`);
  tt.ok(
    (statuses.get('200') ?? 0) > 100 && (statuses.get('400') ?? 0) + (statuses.get('404') ?? 0) > 10,
    'the workloads did real work, successes and failures',
  );
  tt.ok(
    (statuses.get('COMMIT') ?? 0) > 0 && (statuses.get('ROLLBACK') ?? 0) > 0,
    'sessions were committed and rolled back',
  );
  tt.pass('replay -verify exited 0 after every run');
});
