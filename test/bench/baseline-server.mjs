/**
 * The bare baseline of the benchmark: node:http and better-sqlite3
 * in one process, no framework, no authentication, no journal, no isolation,
 * no SQL checks. It answers the benchmark's requests with the same SQL and the
 * same JSON shapes as sqlscribe, so the ratio between the two is the price of
 * everything sqlscribe adds.
 *
 *   node test/bench/baseline-server.mjs [--koa] <data-dir> [bool-column ...]
 *
 * Prints `baseline listening on http://127.0.0.1:PORT` on stderr. Serves every
 * `<name>.db` of <data-dir>; the named columns are answered as JSON booleans.
 * With --koa the same handlers are served through bare Koa and
 * koa-bodyparser, the framework sqlscribe is built on: the gap between the two
 * baselines is what the framework costs, the gap to sqlscribe what it adds.
 */
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const KOA = process.argv[2] === '--koa';
const [dir, ...boolNames] = process.argv.slice(KOA ? 3 : 2);
if (!dir) {
  process.stderr.write('usage: baseline-server.mjs <data-dir> [bool-column ...]\n');
  process.exit(2);
}
const bools = new Set(boolNames);
const connections = new Map();

function connection(db) {
  const name = `${String(db).replace(/\.db$/, '')}.db`;
  let entry = connections.get(name);
  if (!entry) {
    const handle = new Database(path.join(dir, name), { fileMustExist: true, timeout: 0 });
    handle.pragma('journal_mode = WAL');
    handle.pragma('foreign_keys = ON');
    entry = { name, db: handle, statements: new Map() };
    connections.set(name, entry);
  }
  return entry;
}

function prepare(entry, sql) {
  let cached = entry.statements.get(sql);
  if (!cached) {
    const statement = entry.db.prepare(sql);
    const bool = statement.reader ? statement.columns().map((column) => bools.has(column.name)) : [];
    cached = { statement, bool, verb: sql.trimStart().slice(0, 6).toUpperCase() };
    entry.statements.set(sql, cached);
  }
  return cached;
}

function convert(rows, bool) {
  if (!bool.includes(true)) return rows;
  for (const row of rows) for (let i = 0; i < row.length; i++) if (bool[i] && row[i] !== null) row[i] = row[i] === 1;
  return rows;
}

function run(entry, sql, params) {
  const { statement, bool, verb } = prepare(entry, sql);
  const args = params === undefined ? [] : [params];
  if (statement.reader)
    return { columns: statement.columns().map((c) => c.name), rows: convert(statement.raw(true).all(...args), bool) };
  const { changes } = statement.run(...args);
  return { columns: [], rows: [], message: `${verb} ${changes}`, changes };
}

function exec(body) {
  const entry = connection(body.db);
  const sources = body.statements ?? [{ sql: body.sql, params: body.params }];
  const writes = sources.some((source) => !prepare(entry, source.sql).statement.reader);
  entry.db.exec(writes ? 'BEGIN IMMEDIATE' : 'BEGIN');
  try {
    const results = sources.map((source) => run(entry, source.sql, source.params));
    entry.db.exec('COMMIT');
    return { ok: true, db: entry.name, results };
  } catch (error) {
    if (entry.db.inTransaction) entry.db.exec('ROLLBACK');
    throw error;
  }
}

function rows(query) {
  const entry = connection(query.get('db'));
  const table = query.get('table');
  const limit = Math.min(Number(query.get('limit') ?? 25), 1000);
  const offset = Number(query.get('offset') ?? 0);
  const quoted = `"${table.replace(/"/g, '""')}"`;
  entry.db.exec('BEGIN');
  try {
    const total = prepare(entry, `SELECT count(*) FROM ${quoted}`).statement.pluck().get();
    const page = prepare(entry, `SELECT * FROM ${quoted} ORDER BY "id" LIMIT ? OFFSET ?`);
    const columns = page.statement.columns().map((c) => c.name);
    const data = convert(page.statement.raw(true).all(limit, offset), page.bool);
    entry.db.exec('COMMIT');
    return { ok: true, db: entry.name, table, total, limit, offset, columns, rows: data };
  } catch (error) {
    if (entry.db.inTransaction) entry.db.exec('ROLLBACK');
    throw error;
  }
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function health() {
  return {
    ok: true,
    name: 'baseline',
    version: '0',
    single: false,
    dir,
    timeUnix: Math.floor(Date.now() / 1000),
    ready: true,
  };
}

/** Bare node:http: the least any server over better-sqlite3 can cost. */
function nodeServer() {
  return http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      try {
        if (req.method === 'GET' && url.pathname === '/health') return send(res, 200, health());
        if (req.method === 'GET' && url.pathname === '/rows') return send(res, 200, rows(url.searchParams));
        if (req.method === 'POST' && url.pathname === '/exec')
          return send(res, 200, exec(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        send(res, 404, { ok: false, error: 'no such endpoint', code: 2010 });
      } catch (error) {
        send(res, 400, { ok: false, error: String(error.message), code: 1014 });
      }
    });
  });
}

/** Bare Koa and koa-bodyparser: the same handlers, as a Koa application answers them. */
function koaServer() {
  const Koa = require('koa');
  const bodyParser = require('koa-bodyparser');
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      ctx.status = 400;
      ctx.body = { ok: false, error: String(error.message), code: 1014 };
    }
  });
  app.use(bodyParser());
  app.use(async (ctx) => {
    if (ctx.method === 'GET' && ctx.path === '/health') ctx.body = health();
    else if (ctx.method === 'GET' && ctx.path === '/rows') ctx.body = rows(new URLSearchParams(ctx.querystring));
    else if (ctx.method === 'POST' && ctx.path === '/exec') ctx.body = exec(ctx.request.body);
    else {
      ctx.status = 404;
      ctx.body = { ok: false, error: 'no such endpoint', code: 2010 };
    }
  });
  return http.createServer(app.callback());
}

const server = KOA ? koaServer() : nodeServer();

server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`baseline listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
