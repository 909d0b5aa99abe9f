/**
 * The OpenAPI conformance test: GET /openapi.json must describe the
 * real service, and the real service must answer as it says.
 *
 * - The document is a structurally valid OpenAPI 3.1 document: every path and
 *   operation has responses, every $ref resolves, every schema is a valid
 *   JSON Schema 2020-12, and its error catalog is src/errors.ts.
 * - Real requests to real servers (multi-DB with a token, single-DB, a
 *   connection ceiling of 1) cover every operation and many error paths; each
 *   real response must have a status documented for its operation, a
 *   documented content type, the documented required headers, and a body that
 *   validates (ajv, draft 2020-12) against the schema documented for that
 *   status, with its code among the codes listed there. Successful requests
 *   must use only documented query parameters and send bodies that validate
 *   against the documented request body.
 * - Every route of the Koa router is documented and every documented
 *   operation answered at least one real request with a 2xx.
 * - The check can fail: a copy of the document with a wrong shape, a missing
 *   status, a missing code or a missing content type rejects real responses.
 *
 * Build first (`npx tsc -p tsconfig.json`): the server runs from dist/.
 */
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import t, { type Test } from 'tap';
import type Router from '@koa/router';
import { startServer, type Reply, type TestServer } from './helpers/server';
import { buildOpenApiDocument } from '../src/openapi/openapi-document';
import { catalog, formatCode } from '../src/errors';
import { createApp } from '../src/app';
import { parseCommandLine } from '../src/config/options';
import { Readiness } from '../src/http/bookkeeping/readiness';
import { version } from '../src/version';
import type { CommandBus } from '../src/bus/command-bus';
import { scratchDir } from './helpers/scratch-dir';
import { startNats } from './helpers/nats-server';
import { sleep } from './helpers/wait';

t.setTimeout(240_000);

/* eslint-disable @typescript-eslint/no-explicit-any -- the document and bodies are JSON */
type Json = any;

const TOKEN = 'open-sesame';
const DOC_ID = 'urn:sqlscribe:openapi';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const NO_TOKEN = { 'X-Service-Token': '' };

// ── the checker ───────────────────────────────────────────────────────────────

const escape = (part: string): string => part.replace(/~/g, '~0').replace(/\//g, '~1');

function atPointer(doc: Json, pointer: string): Json {
  let node = doc;
  for (const part of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** A path template as a regular expression (`/pilots/{id}` → `^/pilots/[^/]+$`). */
function templateRegex(template: string): RegExp {
  return new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);
}

interface RequestSent {
  body?: unknown;
}

class Conformance {
  /**
   * Strict, so that a misspelt keyword in the document fails; the document's own top-level
   * fields (openapi, info, paths…) are declared as keywords so that ajv can hold the whole
   * document and resolve its `#/components/...` references. strictRequired is off: an
   * `if/then` that requires a property defined beside it is correct JSON Schema.
   */
  readonly ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  /** `METHOD template status` of every checked reply. */
  readonly seen = new Set<string>();

  constructor(readonly doc: Json) {
    addFormats(this.ajv);
    for (const field of Object.keys(doc)) this.ajv.addKeyword(field);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /** The validator of the schema at a JSON pointer of the document. */
  validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** Follows OpenAPI references (responses, parameters) to the object and its pointer. */
  deref(node: Json, pointer: string): { node: Json; pointer: string } {
    while (node !== undefined && typeof node.$ref === 'string') {
      pointer = node.$ref.slice(1);
      node = atPointer(this.doc, pointer);
    }
    return { node, pointer };
  }

  template(urlPath: string): string | undefined {
    const paths = Object.keys(this.doc.paths);
    return paths.find((p) => p === urlPath) ?? paths.find((p) => p.includes('{') && templateRegex(p).test(urlPath));
  }

  private schemaProblems(pointer: string, value: unknown, what: string): string[] {
    const validate = this.validator(pointer);
    if (validate(value)) return [];
    return (validate.errors ?? [])
      .slice(0, 8)
      .map((e) => `${what}: ${e.instancePath || '/'} ${e.message ?? ''} (${e.schemaPath})`);
  }

  /** Problems of a reply against the response the document gives for its status. */
  private responseProblems(response: Json, responsePointer: string, reply: Reply, what: string): string[] {
    const { node, pointer } = this.deref(response, responsePointer);
    const problems: string[] = [];
    for (const [name, header] of Object.entries<Json>(node.headers ?? {})) {
      if (header.required === true && !reply.headers.has(name))
        problems.push(`${what}: required header ${name} missing`);
    }
    const content = node.content as Json;
    if (content === undefined)
      return reply.text === '' ? problems : [...problems, `${what}: a body where none is documented`];
    const type = (reply.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (content[type] === undefined)
      return [...problems, `${what}: content type ${type} not documented (${Object.keys(content).join(', ')})`];
    const value = type === 'application/json' ? reply.body : reply.text;
    if (type === 'application/json' && value === undefined) return [...problems, `${what}: body is not JSON`];
    problems.push(...this.schemaProblems(`${pointer}/content/${escape(type)}/schema`, value, what));
    if (
      reply.status >= 400 &&
      type === 'application/json' &&
      !String(value?.error).startsWith(`${formatCode(Number(value?.code))} `)
    ) {
      problems.push(`${what}: error does not start with its bracketed code`);
    }
    return problems;
  }

  /** Query parameters, required parameters and the request body of a successful request. */
  private requestProblems(op: Json, opPointer: string, url: URL, sent: RequestSent, what: string): string[] {
    const problems: string[] = [];
    const params = (op.parameters ?? []).map(
      (p: Json, i: number) => this.deref(p, `${opPointer}/parameters/${i}`).node,
    );
    for (const key of url.searchParams.keys()) {
      if (!params.some((p: Json) => p.in === 'query' && p.name === key))
        problems.push(`${what}: query parameter ${key} not documented`);
    }
    for (const p of params)
      if (p.in === 'query' && p.required && !url.searchParams.has(p.name))
        problems.push(`${what}: required ${p.name} not sent`);
    const body = op.requestBody === undefined ? undefined : this.deref(op.requestBody, `${opPointer}/requestBody`);
    if (sent.body !== undefined && body === undefined)
      problems.push(`${what}: a request body where none is documented`);
    if (sent.body === undefined && body?.node.required === true)
      problems.push(`${what}: the documented body is required`);
    if (sent.body !== undefined && body !== undefined)
      problems.push(
        ...this.schemaProblems(`${body.pointer}/content/application~1json/schema`, sent.body, `${what} request body`),
      );
    return problems;
  }

  /** Every way a real exchange differs from the document; empty when it conforms. */
  problems(method: string, pathAndQuery: string, reply: Reply, sent: RequestSent = {}): string[] {
    const url = new URL(pathAndQuery, 'http://x');
    const what = `${method} ${pathAndQuery} → ${reply.status}`;
    const template = this.template(url.pathname);
    const op = template === undefined ? undefined : this.doc.paths[template][method.toLowerCase()];
    if (template === undefined || op === undefined) {
      // Unmatched requests: 404 for an unknown path, 405 for another method (x-unmatched-responses).
      const which = template === undefined ? 'unknownPath' : 'otherMethod';
      this.seen.add(`${method} (${which}) ${reply.status}`);
      const expected = template === undefined ? 404 : 405;
      if (reply.status !== expected) return [`${what}: undocumented ${template === undefined ? 'path' : 'method'}`];
      return this.responseProblems(
        this.doc['x-unmatched-responses'][which],
        `/x-unmatched-responses/${which}`,
        reply,
        what,
      );
    }
    const opPointer = `/paths/${escape(template)}/${method.toLowerCase()}`;
    this.seen.add(`${method.toUpperCase()} ${template} ${reply.status}`);
    const response = op.responses[String(reply.status)];
    if (response === undefined)
      return [`${what}: status ${reply.status} not documented for ${method} ${template} (${reply.text.slice(0, 200)})`];
    const problems = this.responseProblems(response, `${opPointer}/responses/${reply.status}`, reply, what);
    if (reply.status < 300) problems.push(...this.requestProblems(op, opPointer, url, sent, what));
    return problems;
  }

  operations(): Array<{ method: string; template: string; op: Json }> {
    return Object.entries<Json>(this.doc.paths).flatMap(([template, item]) =>
      METHODS.filter((m) => item[m] !== undefined).map((m) => ({ method: m.toUpperCase(), template, op: item[m] })),
    );
  }
}

// ── requests ──────────────────────────────────────────────────────────────────

interface Call {
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** The status this request is meant to get (so that each error path is really taken). */
  status?: number;
  code?: number;
}

/** Sends a request, checks the reply against the document, and the status/code it was meant to get. */
async function call(
  tt: Test,
  conf: Conformance,
  server: TestServer,
  method: string,
  url: string,
  c: Call = {},
): Promise<Reply> {
  const options = {
    ...(c.body !== undefined ? { body: c.body } : {}),
    ...(c.rawBody !== undefined ? { rawBody: c.rawBody } : {}),
    ...(c.headers ? { headers: c.headers } : {}),
  };
  const reply = await server.request(method, url, options);
  tt.same(
    conf.problems(method, url, reply, c.body === undefined ? {} : { body: c.body }),
    [],
    `${method} ${url.slice(0, 80)} → ${reply.status} conforms`,
  );
  if (c.status !== undefined)
    tt.equal(reply.status, c.status, `${method} ${url.slice(0, 80)}: status ${c.status} (${reply.text.slice(0, 200)})`);
  if (c.code !== undefined) tt.equal(reply.body?.code, c.code, `${method} ${url.slice(0, 80)}: code ${c.code}`);
  return reply;
}

const pilot = (over: Record<string, unknown> = {}, scope: Record<string, unknown> = {}): Json => ({
  date: '2026-05-04',
  responsible_role: 'teacher',
  scope: { level: '7', subject: 'math', objective: 'fractions', class_codes: ['7A'], ...scope },
  commit: 'abcdef1',
  planned_minutes: 45,
  actual_minutes: 50,
  aggregate_evidence: { aun_no_observable: 1, en_desarrollo: 2, logrado: 3, profundizado: 4 },
  incidents: [],
  decision: 'conservar',
  ...over,
});

async function serve(tt: Test, args: string[], headers?: Record<string, string>): Promise<TestServer> {
  const cwd = scratchDir(tt);
  const server = await startServer(args, headers === undefined ? { cwd } : { cwd, headers });
  tt.teardown(() => server.stop());
  return server;
}

// ── the document ──────────────────────────────────────────────────────────────

let conf: Conformance;

function allRefs(node: Json, at: string, out: Array<[string, string]>): void {
  if (node === null || typeof node !== 'object') return;
  if (typeof node.$ref === 'string') out.push([at, node.$ref]);
  for (const [key, value] of Object.entries(node)) allRefs(value, `${at}/${escape(key)}`, out);
}

/** Every schema object in the document that is not a component schema: parameters, bodies, responses. */
function inlineSchemas(doc: Json): Array<[string, Json]> {
  const found: Array<[string, Json]> = [];
  const visit = (node: Json, at: string): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries<Json>(node)) {
      if (key === 'schema' && typeof value === 'object') found.push([`${at}/schema`, value]);
      else visit(value, `${at}/${escape(key)}`);
    }
  };
  visit(doc.paths, '/paths');
  visit(doc.components.parameters, '/components/parameters');
  visit(doc.components.responses, '/components/responses');
  return found;
}

t.test('GET /openapi.json is a valid OpenAPI 3.1 document of the whole service', async (tt) => {
  const server = await serve(tt, ['-dir', 'data', '-token', TOKEN], { 'X-Service-Token': TOKEN });
  const reply = await server.get('/openapi.json');
  tt.equal(reply.status, 200);
  tt.match(reply.headers.get('content-type'), /^application\/json/);
  const doc = reply.body;
  conf = new Conformance(doc);
  tt.same(
    doc,
    JSON.parse(JSON.stringify(buildOpenApiDocument())),
    'the server serves the document of src/openapi (dist is current)',
  );

  tt.match(doc.openapi, /^3\.1\.\d+$/, 'openapi 3.1.x');
  tt.equal(doc.info.title, 'sqlscribe');
  tt.equal(doc.info.version, version, 'info.version is the package version');
  tt.same(doc.servers, [{ url: '/', description: doc.servers[0].description }]);
  tt.same(doc.components.securitySchemes.serviceToken, {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Token',
    description: doc.components.securitySchemes.serviceToken.description,
  });
  tt.match(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' });
  const expectedPaths = [
    '/index.html',
    '/console/{file}',
    '/health',
    '/metrics',
    '/dbs',
    '/dbs/{db}/reset',
    '/dbs/{db}/restore',
    '/tables',
    '/schema',
    '/rows',
    '/exec',
    '/tx/begin',
    '/tx/commit',
    '/tx/rollback',
    '/dbs/{db}/import',
    '/dbs/{db}/export',
    '/pilots',
    '/pilots/{id}',
    '/pilots/schema',
    '/pilots/summary',
    '/openapi.json',
    '/journal',
    '/',
  ];
  for (const p of expectedPaths) tt.ok(doc.paths[p], `documents ${p}`);

  const ids = new Set<string>();
  for (const { method, template, op } of conf.operations()) {
    const what = `${method} ${template}`;
    tt.ok(template.startsWith('/'), `${what}: path starts with /`);
    tt.ok(typeof op.operationId === 'string' && !ids.has(op.operationId), `${what}: unique operationId`);
    ids.add(op.operationId);
    tt.ok(Object.keys(op.responses ?? {}).length > 0, `${what}: has responses`);
    for (const [status, response] of Object.entries<Json>(op.responses)) {
      tt.match(status, /^[1-5]\d\d$/, `${what}: response key ${status} is a status`);
      const { node } = conf.deref(response, '');
      tt.type(node.description, 'string', `${what} ${status}: has a description`);
      for (const media of Object.values<Json>(node.content ?? {}))
        tt.ok(media.schema, `${what} ${status}: every content has a schema`);
    }
    const params = (op.parameters ?? []).map((p: Json) => conf.deref(p, '').node);
    for (const p of params) {
      tt.ok(
        ['query', 'header', 'path', 'cookie'].includes(p.in) && typeof p.name === 'string' && p.schema,
        `${what}: parameter ${p.name} is complete`,
      );
      if (p.in === 'path') tt.equal(p.required, true, `${what}: path parameter ${p.name} is required`);
    }
    for (const [, name] of template.matchAll(/\{([^}]+)\}/g))
      tt.ok(
        params.some((p: Json) => p.in === 'path' && p.name === name),
        `${what}: declares path parameter ${name}`,
      );
    if (op.security === undefined || op.security.length > 0)
      tt.ok(op.responses['401'], `${what}: documents 401 (behind the token)`);
  }

  const refs: Array<[string, string]> = [];
  allRefs(doc, '', refs);
  tt.ok(refs.length > 50, `${refs.length} references`);
  for (const [at, ref] of refs)
    tt.not(ref.startsWith('#') ? atPointer(doc, ref.slice(1)) : undefined, undefined, `${at}: ${ref} resolves`);

  for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
    tt.ok(
      conf.ajv.validateSchema(schema),
      `components.schemas.${name} is a valid JSON Schema 2020-12 ${JSON.stringify(conf.ajv.errors ?? '')}`,
    );
    tt.doesNotThrow(() => conf.validator(`/components/schemas/${escape(name)}`), `components.schemas.${name} compiles`);
  }
  for (const [at, schema] of inlineSchemas(doc)) {
    tt.ok(conf.ajv.validateSchema(schema), `${at} is a valid JSON Schema 2020-12`);
    tt.doesNotThrow(() => conf.validator(at), `${at} compiles`);
  }

  const published = Object.fromEntries(
    doc['x-error-codes'].map((e: Json) => [e.name, { code: e.code, status: e.status, message: e.message }]),
  );
  tt.same(published, JSON.parse(JSON.stringify(catalog)), 'x-error-codes is the catalog of src/errors.ts');
  tt.same(
    doc.components.schemas.ErrorBody.properties.code.enum,
    Object.values(catalog).map((e) => e.code),
    'ErrorBody.code lists every code',
  );
  for (const { code } of Object.values(catalog))
    tt.match(doc.components.schemas.ErrorBody.description, formatCode(code), `ErrorBody describes ${formatCode(code)}`);
});

// ── real requests ─────────────────────────────────────────────────────────────

/** A real path for a documented template. */
function concrete(template: string): string {
  return template.replace('{id}', '1').replace('{file}', 'console.css').replace('{db}', 'school');
}

async function databasesAndTables(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  await c('GET', '/dbs', { status: 200 });
  await c('POST', '/dbs', { body: { db: ' School ' }, status: 201 });
  await c('POST', '/dbs', { body: { db: 'school' }, status: 409, code: 2007 });
  await c('POST', '/dbs', { body: { db: '../etc' }, status: 400, code: 1011 });
  await c('POST', '/dbs', { body: {}, status: 400, code: 1011 });
  await c('POST', '/dbs', { rawBody: '[1]', headers: { 'content-type': 'application/json' }, status: 400, code: 1006 });
  await c('POST', '/dbs', {
    rawBody: '{"db":',
    headers: { 'content-type': 'application/json' },
    status: 400,
    code: 1009,
  });
  await c('POST', '/dbs', {
    rawBody: Buffer.from([0x7b, 0x22, 0x64, 0x62, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    headers: { 'content-type': 'application/json' },
    status: 400,
    code: 1015,
  });
  await c('POST', '/dbs', {
    rawBody: 'db=school',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
    code: 1010,
  });
  await c('POST', '/dbs', { body: { db: 'x'.repeat(1_100_000) }, status: 413, code: 6002 });
  await c('POST', '/dbs', { body: { prefix: 'pupil', count: 2, from: 'school' }, status: 201 });
  await c('POST', '/dbs', { body: { db: 'copy', from: 'school' }, status: 201 });
  await c('POST', '/dbs', { body: { prefix: 'pupil', count: 101, from: 'school' }, status: 400, code: 1040 });
  await c('POST', '/dbs', { body: { db: 'other', from: 'nowhere' }, status: 404, code: 2001 });
  await c('POST', '/dbs/copy/reset', { status: 200 });
  await c('POST', '/dbs/school/reset', { status: 409, code: 2040 });
  await c('POST', '/dbs/ghost/reset', { status: 404, code: 2001 });
  await c('POST', '/dbs/copy/restore', { body: { undo: 'last', dryRun: true }, status: 200 });
  await c('POST', '/dbs/copy/restore', { body: { undo: 'last' }, status: 200 });
  await c('POST', '/dbs/copy/restore', { body: { to: 0 }, status: 409, code: 2076 });
  await c('POST', '/dbs/copy/restore', { body: { to: 'soon' }, status: 400, code: 1075 });
  await c('POST', '/dbs/ghost/restore', { body: { to: 1 }, status: 404, code: 2001 });
  await c('GET', '/dbs', { status: 200 });

  await c('GET', '/tables', { status: 400, code: 7003 });
  await c('GET', '/tables?db=nowhere', { status: 404, code: 2001 });
  await c('GET', '/tables?db=a&db=b', { status: 400, code: 1008 });
  await c('GET', '/tables?db=school', { status: 200 });
  const ddl = [
    'CREATE TABLE classes (code TEXT PRIMARY KEY, room INT)',
    'CREATE TABLE pupils (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, age INT DEFAULT 12, score FLOAT DEFAULT NULL, enrolled BOOL DEFAULT TRUE, class TEXT REFERENCES classes(code) ON DELETE CASCADE, joined TEXT DEFAULT CURRENT_TIMESTAMP)',
    'CREATE INDEX pupils_age ON pupils (age)',
    'CREATE VIEW class_sizes AS SELECT class, count(*) AS n FROM pupils GROUP BY class',
    'CREATE TRIGGER pupils_touch AFTER UPDATE ON pupils BEGIN SELECT 1; END',
    "INSERT INTO classes VALUES ('7A', 12)",
    "INSERT INTO pupils (name, age, score, class) VALUES ('Ana', 12, 6.5, '7A'), ('Bruno', 13, NULL, NULL), ('Carla', NULL, 5, '7A')",
  ].join('; ');
  await c('POST', '/exec', { body: { db: 'school', sql: ddl }, status: 200 });
  await c('GET', '/tables?db=school', { status: 200 });
  await c('GET', '/schema?db=school&table=pupils', { status: 200 });
  await c('GET', '/schema?db=school&table=class_sizes', { status: 200 });
  await c('GET', '/rows?db=school&table=class_sizes&limit=1', { status: 200 });
  await c('GET', '/rows?db=school&table=class_sizes&after=eyJ2IjoxfQ', { status: 400, code: 1021 });
  await c('GET', '/schema?db=school', { status: 400, code: 1008 });
  await c('GET', '/schema?db=school&table=teachers', { status: 404, code: 2002 });
  await c('GET', '/schema?table=pupils', { status: 400, code: 7003 });
  await c('GET', '/rows?db=school&table=pupils', { status: 200 });
  const clamped = await c('GET', '/rows?db=school&table=pupils&limit=5000&offset=1', { status: 200 });
  tt.equal(clamped.body?.limit, 1000, 'a limit above 1000 is clamped, as documented');
  await c('GET', '/rows?db=school&table=pupils&limit=-1', { status: 400, code: 1008 });
  await c('GET', '/rows?db=school&table=pupils&offset=x', { status: 400, code: 1008 });
  await c('GET', '/rows?db=school&table=teachers', { status: 404, code: 2002 });
  await c('GET', '/rows?db=nowhere&table=pupils', { status: 404, code: 2001 });
  const first = await c('GET', '/rows?db=school&table=pupils&limit=2', { status: 200 });
  const next = String(first.body?.next);
  const after = await c('GET', `/rows?db=school&table=pupils&limit=2&after=${next}`, { status: 200 });
  tt.equal(after.body?.next, undefined, 'the last page carries no next');
  await c('GET', `/rows?db=school&table=pupils&after=${next}&offset=0`, { status: 400, code: 1020 });
  await c('GET', '/rows?db=school&table=pupils&after=not-a-cursor', { status: 400, code: 1018 });
  await c('GET', `/rows?db=school&table=classes&after=${next}`, { status: 400, code: 1019 });
}

async function sql(tt: Test, server: TestServer): Promise<void> {
  const c = (
    body: unknown,
    status: number,
    code?: number,
    headers?: Record<string, string>,
    url = '/exec',
  ): Promise<Reply> =>
    call(tt, conf, server, 'POST', url, {
      body,
      status,
      ...(code === undefined ? {} : { code }),
      ...(headers ? { headers } : {}),
    });
  await c(
    {
      db: 'school',
      sql: "SELECT name, age, enrolled, score FROM pupils WHERE age > 11 ORDER BY id; UPDATE pupils SET age = age + 1 WHERE age IS NOT NULL; DELETE FROM pupils WHERE name = 'nobody'",
    },
    200,
  );
  await c({ db: 'school', sql: 'SELECT * FROM pupils WHERE id = ?', params: [1] }, 200);
  await c({ db: 'school', sql: 'SELECT * FROM pupils WHERE name = :name', params: { name: 'Ana' } }, 200);
  await c(
    {
      db: 'school',
      statements: [
        { sql: 'INSERT INTO pupils (name) VALUES (?)', params: ['Dario'] },
        { sql: 'SELECT count(*), randomblob(4), 9007199254740993 FROM pupils' },
      ],
    },
    200,
  );
  await c({ db: 'school', sql: 'INTEGRITY CHECK' }, 200);
  const dbLevel = await c({ sql: 'CREATE DATABASE IF NOT EXISTS lab; SHOW DATABASES' }, 200);
  tt.notOk('db' in (dbLevel.body ?? {}), 'database-level statements answer without db');
  await c({ sql: 'CREATE DATABASE school' }, 409, 2007);
  await c({ sql: 'DROP DATABASE nowhere' }, 404, 2001);
  await c({ sql: 'CREATE DATABASE x; SELECT 1', db: 'school' }, 400, 7002);
  await c({ db: 'school', sql: "INSERT INTO pupils (name, age) VALUES ('Eva', 'twelve')" }, 400, 4001);
  await c({ db: 'school', sql: "INSERT INTO pupils (name) VALUES ('Ana')" }, 400, 3002);
  await c({ db: 'school', sql: "INSERT INTO pupils (name, class) VALUES ('Fede', '9Z')" }, 400, 3004);
  await c({ db: 'school', sql: 'SELEC 1' }, 400, 1001);
  await c({ db: 'school', sql: 'BEGIN' }, 400, 1004);
  await c({ db: 'school', sql: "ATTACH 'x.db' AS x" }, 400, 1003);
  await c({ db: 'school', sql: '  ;  ' }, 400, 1005);
  await c({ db: 'school', sql: 'SELECT * FROM teachers' }, 400, 2003);
  await c({ db: 'school', sql: 'SELECT * FROM pupils WHERE id = ?', params: [] }, 400, 1007);
  await c({ db: 'school', sql: 'CREATE TABLE t (x WHATEVER)' }, 400, 4002);
  await c({ db: 'school', sql: 'SELECT 1', statements: [] }, 400, 1006);
  await c({ db: 'school' }, 400, 1006);
  await c({ sql: 'SELECT 1' }, 400, 7003);
  await c({ db: 'nowhere', sql: 'SELECT 1' }, 404, 2001);
  tt.notOk(
    conf.validator('/components/schemas/ExecRequest')({ sql: 'SELECT 1', statements: [] }),
    'the documented body refuses sql with statements',
  );
  tt.notOk(
    conf.validator('/components/schemas/ExecRequest')({ db: 'school' }),
    'the documented body needs sql or statements',
  );
}

async function importExport(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  const sql = { 'content-type': 'application/sql' };
  await c('POST', '/dbs', { body: { db: 'lesson' }, status: 201 });
  await c('POST', '/dbs/lesson/import', {
    rawBody:
      "\uFEFFCREATE TABLE album (id INTEGER PRIMARY KEY, title NVARCHAR(160), released DATETIME); INSERT INTO album VALUES (1, 'A', '2020-01-01')",
    headers: sql,
    status: 200,
  });
  await c('GET', '/schema?db=lesson&table=album', { status: 200 });
  await c('POST', '/dbs/lesson/import?table=marks&types=INT,FLOAT', {
    rawBody: 'pupil,mark\r\n1,6.5\r\n',
    headers: { 'content-type': 'text/csv' },
    status: 200,
  });
  const file = await fetch(`${server.url}/dbs/lesson/export?format=sqlite`, { headers: { 'X-Service-Token': TOKEN } });
  await c('POST', '/dbs', { body: { db: 'imported' }, status: 201 });
  await c('POST', '/dbs/imported/import', {
    rawBody: Buffer.from(await file.arrayBuffer()),
    headers: { 'content-type': 'application/vnd.sqlite3' },
    status: 200,
  });
  await c('GET', '/dbs/lesson/export', { status: 200 });
  await c('GET', '/dbs/lesson/export?format=sqlite', { status: 200 });
  await c('GET', '/dbs/lesson/export?format=csv&table=marks', { status: 200 });
  await c('GET', '/dbs/lesson/export?format=csv', { status: 400, code: 1008 });
  await c('GET', '/dbs/lesson/export?format=csv&table=nothing', { status: 404, code: 2002 });
  await c('GET', '/dbs/nowhere/export', { status: 404, code: 2001 });
  await c('POST', '/dbs/lesson/import', {
    rawBody: 'CREATE TABLE x (a INT); INSERT INTO x VALUES (1); INSERT INTO missing_table VALUES (1)',
    headers: sql,
    status: 400,
    code: 2003,
  });
  await c('POST', '/dbs/lesson/import', {
    rawBody: 'SELECT 1; COMMIT; SELECT 2',
    headers: sql,
    status: 400,
    code: 1055,
  });
  await c('POST', '/dbs/lesson/import', {
    rawBody: 'a;b',
    headers: { 'content-type': 'text/plain' },
    status: 415,
    code: 1051,
  });
  await c('POST', '/dbs/lesson/import', {
    rawBody: 'not a database file',
    headers: { 'content-type': 'application/vnd.sqlite3' },
    status: 400,
    code: 1052,
  });
  await c('POST', '/dbs/lesson/import?table=marks', {
    rawBody: 'pupil\r\n1\r\n',
    headers: { 'content-type': 'text/csv' },
    status: 400,
    code: 2050,
  });
  await c('POST', '/dbs/lesson/import?table=bad', {
    rawBody: 'a,b\r\n1\r\n',
    headers: { 'content-type': 'text/csv' },
    status: 400,
    code: 1050,
  });
  await c('POST', '/dbs/nowhere/import', { rawBody: 'SELECT 1', headers: sql, status: 404, code: 2001 });
}

async function sessions(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  await c('POST', '/tx/begin', { status: 400, code: 7003 });
  await c('POST', '/tx/begin', { body: { db: 'nowhere' }, status: 404, code: 2001 });
  const begun = await c('POST', '/tx/begin', { body: { db: 'school' }, status: 200 });
  const id = String(begun.body?.session);
  const second = await c('POST', '/tx/begin', { body: { db: 'lab' }, status: 409, code: 5004 });
  tt.ok(second.headers.get('retry-after'), 'a second begin carries Retry-After');
  const inSession = await c('POST', '/exec', {
    body: { sql: "INSERT INTO pupils (name) VALUES ('Gala'); SAVEPOINT s1" },
    headers: { 'X-Service-Session': id },
    status: 200,
  });
  tt.equal(inSession.body?.session, id, 'the session answer carries the session');
  await c('POST', `/exec?session=${id}`, { body: { sql: 'ROLLBACK TO s1; SELECT count(*) FROM pupils' }, status: 200 });
  await c('POST', `/exec?session=${id}`, { body: { sql: 'SELECT 1', params: [] }, status: 200 });
  await c('POST', '/exec', {
    body: { db: 'school', sql: "INSERT INTO pupils (name) VALUES ('Outsider')" },
    status: 409,
    code: 5005,
  });
  await c('POST', `/exec?session=${id}`, { body: { db: 'lab', sql: 'SELECT 1' }, status: 400, code: 5006 });
  await c('POST', `/exec?session=${id}`, { body: { sql: 'SHOW DATABASES' }, status: 400, code: 5008 });
  await c('POST', `/exec?session=${id}`, { body: { sql: 'ROLLBACK TO nowhere' }, status: 400, code: 5001 });
  await c('POST', `/exec?session=${id}`, {
    body: { sql: 'SELECT 1' },
    headers: { 'X-Service-Session': '0123456789abcdef' },
    status: 400,
    code: 1006,
  });
  await c('POST', '/exec?session=0123456789abcdef', { body: { sql: 'SELECT 1' }, status: 404, code: 5002 });
  await c('POST', '/tx/commit', { status: 400, code: 5009 });
  await c('POST', `/tx/commit?session=${id}`, { status: 200 });
  await c('POST', `/tx/commit?session=${id}`, { status: 404, code: 5002 });
  await c('POST', `/tx/rollback?session=${id}`, { status: 404, code: 5002 });
  const again = await c('POST', '/tx/begin', { body: { db: 'school' }, status: 200 });
  await c('POST', `/tx/rollback?session=${String(again.body?.session)}`, { status: 200 });
  await c('POST', '/tx/rollback', { rawBody: 'x', headers: { 'content-type': 'text/plain' }, status: 415, code: 1010 });
}

async function pilots(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  const schema = await c('GET', '/pilots/schema', { status: 200 });
  tt.same(
    schema.body,
    conf.doc.components.schemas.PilotRecord,
    'the PilotRecord schema is the one POST /pilots validates with',
  );
  const stored = await c('POST', '/pilots', {
    body: pilot({ notes_without_personal_data: 'Went well.' }, { unit: 'extra scope fields are allowed' }),
    status: 201,
  });
  const invalid = await c('POST', '/pilots', {
    body: pilot({ date: 'yesterday', commit: 'XYZ', extra: 1 }, { class_codes: [] }),
    status: 400,
    code: 1016,
  });
  tt.ok((invalid.body?.violations ?? []).length >= 4, 'every violation at once');
  await c('POST', '/pilots', {
    body: pilot({ notes_without_personal_data: 'write to ana@example.com' }),
    status: 400,
    code: 1017,
  });
  await c('POST', '/pilots', { status: 400, code: 1016 });
  await c('POST', '/pilots', { body: pilot({ decision: 'corregir' }, { objective: 'decimals' }), status: 201 });
  await c('POST', '/pilots', {
    body: pilot({ decision: 'retirar' }, { objective: 'decimals' }),
    status: 409,
    code: 2014,
  });
  await c('POST', '/pilots', {
    body: pilot({ decision: 'retirar', commit: 'abcdef2' }, { objective: 'decimals' }),
    status: 201,
  });
  await c('POST', '/pilots', {
    body: pilot({ commit: 'abcdef3' }, { objective: 'decimals' }),
    status: 409,
    code: 2013,
  });
  await c('GET', '/pilots', { status: 200 });
  await c(
    'GET',
    '/pilots?decision=conservar&commit=abcdef1&subject=math&level=7&from=2026-01-01&to=2026-12-31&limit=2&offset=0',
    { status: 200 },
  );
  await c('GET', '/pilots?decision=maybe', { status: 400, code: 1008 });
  await c('GET', '/pilots?from=May', { status: 400, code: 1008 });
  await c('GET', '/pilots?limit=x', { status: 400, code: 1008 });
  await c('GET', `/pilots/${String(stored.body?.id)}`, { status: 200 });
  await c('GET', '/pilots/999999', { status: 404, code: 2012 });
  await c('GET', '/pilots/abc', { status: 404, code: 2012 });
  await c('GET', '/pilots/summary', { status: 200 });
  await c('GET', '/pilots/summary?group_by=commit', { status: 200 });
  await c('GET', '/pilots/summary?group_by=subject', { status: 200 });
  await c('GET', '/pilots/summary?group_by=teacher', { status: 400, code: 1008 });
}

async function serviceAndUnmatched(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  await c('GET', '/health', { status: 200 });
  await c('GET', '/health', { headers: { 'X-Service-Token': '', Authorization: `Bearer ${TOKEN}` }, status: 200 });
  await c('GET', '/metrics', { status: 200 });
  await c('GET', '/metrics?format=prometheus', { status: 200 });
  await c('GET', '/metrics?format=a&format=b', { status: 400, code: 1008 });
  await c('GET', '/openapi.json', { status: 200 });
  await c('GET', '/nowhere', { status: 404, code: 2010 });
  const notAllowed = await c('DELETE', '/dbs', { status: 405, code: 1013 });
  tt.match(notAllowed.headers.get('allow'), /GET/, '405 names the allowed methods');
  await c('PUT', '/health', { status: 405, code: 1013 });
  // A GET is read like any request, body included: its 400/413/415 are described once, in info.description.
  const getWithBody = await getWithBodyOf(server.url, '/dbs', {
    'content-type': 'text/plain',
    'X-Service-Token': TOKEN,
  });
  tt.same(conf.problems('GET', '/dbs', getWithBody), [], 'a GET with a body conforms');
  // The console: its page, every asset it links, an unknown asset, another method.
  const page = await c('GET', '/', { headers: NO_TOKEN });
  if (page.status === 200) {
    const assets = [...page.text.matchAll(/(?:src|href)="(\/console\/[^"?#]+)"/g)].map((m) => m[1] as string);
    tt.ok(assets.length > 0, 'the console page links its assets');
    for (const asset of new Set(assets)) await c('GET', asset, { headers: NO_TOKEN, status: 200 });
    await c('GET', '/console/nothing.css', { headers: NO_TOKEN, status: 404, code: 2010 });
    await c('GET', '/index.html', { headers: NO_TOKEN, status: 200 });
    await c('POST', '/', { headers: NO_TOKEN, status: 405, code: 1013 });
  }
}

/** A GET that carries a body (fetch refuses to send one). */
function getWithBodyOf(base: string, urlPath: string, headers: Record<string, string>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${base}${urlPath}`,
      { method: 'GET', headers: { ...headers, 'content-length': '1' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const replyHeaders = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (typeof value === 'string') replyHeaders.set(name, value);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: replyHeaders, body, text });
        });
      },
    );
    request.on('error', reject);
    request.end('x');
  });
}

/** Every documented operation without a token: 401 (the console: served without one). */
async function journalFeed(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  await c('GET', '/journal?since=0&limit=2&failed=false', { status: 200 });
  await c('GET', '/journal?class=2,3&code=2003&db=school.db', { status: 200 });
  await c('GET', '/journal?limit=0', { status: 400, code: 1008 });
  await c('GET', '/journal', { headers: { 'Last-Event-ID': 'x' }, status: 400, code: 1006 });
}

/** Personal tokens: made one at a time and as a class (JSON and CSV), listed, revoked; and what a read token is refused. */
async function tokens(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  const one = await c('POST', '/tokens', {
    body: { name: 'reader', role: 'read', databases: ['school'], expires: '2999-01-01T00:00:00Z' },
    status: 201,
  });
  await c('POST', '/tokens', { body: { prefix: 'clase', count: 2, role: 'write' }, status: 201 });
  await c('POST', '/tokens?format=csv', { body: { prefix: 'tarjeta', count: 2, role: 'read' }, status: 201 });
  // A teacher's own bound on a database's size: sent and answered as the document says (GET /tokens lists it below).
  await c('POST', '/tokens', {
    body: { name: 'teacher-big', role: 'write', databases: ['school'], maxDatabaseMb: 500 },
    status: 201,
  });
  await c('POST', '/tokens', { body: { prefix: 'lab', count: 1, role: 'write', maxDatabaseMb: 200 }, status: 201 });
  await c('POST', '/tokens', {
    body: { name: 'reader', role: 'read', databases: ['school'] },
    status: 409,
    code: 2031,
  });
  await c('POST', '/tokens', { body: { name: 'x', role: 'owner' }, status: 400, code: 1034 });
  await c('POST', '/tokens', { body: { prefix: 'big', count: 501, role: 'read' }, status: 400, code: 1035 });
  await c('GET', '/tokens', { status: 200 });
  const reader = { 'X-Service-Token': String(one.body?.tokens?.[0]?.secret) };
  await c('GET', '/metrics', { headers: reader, status: 403, code: 1030 });
  await c('GET', '/tables?db=clase-01', { headers: reader, status: 403, code: 1031 });
  await c('POST', '/exec', {
    headers: reader,
    body: { db: 'school', sql: 'DELETE FROM pupils' },
    status: 403,
    code: 1032,
  });
  await c('GET', '/class', { status: 200 });
  await c('GET', '/class', { headers: reader, status: 403, code: 1030 });
  await c('GET', '/dbs/school/history?limit=3', { status: 200 });
  await c('GET', '/dbs/school.db/history?failed=true&since=1&until=2999-01-01T00:00:00Z', {
    headers: reader,
    status: 200,
  });
  await c('GET', '/dbs/clase-01/history', { headers: reader, status: 403, code: 1031 });
  await c('GET', '/dbs/school/history?limit=0', { status: 400, code: 1070 });
  await c('GET', '/dbs/nobody/history', { status: 404, code: 2001 });
  await c('DELETE', `/tokens/${String(one.body?.tokens?.[0]?.id)}`, { status: 200 });
  await c('DELETE', '/tokens/tok_000000000000', { status: 404, code: 2030 });
}

async function exercises(tt: Test, server: TestServer): Promise<void> {
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  const exercise = {
    id: 'ages',
    set: 'lesson-1',
    title: 'Ages',
    prompt: "The pupils' **ages**.",
    template: 'school',
    solution: 'SELECT name, age FROM pupils',
    showRows: true,
  };
  await c('POST', '/exercises', { body: exercise, status: 201 });
  await c('POST', '/exercises', {
    body: {
      id: 'older',
      set: 'lesson-1',
      position: 5,
      title: 'Older',
      template: 'school',
      solution: 'UPDATE pupils SET age = age + 1',
      check: 'SELECT name, age FROM pupils',
      order: 'exact',
      columns: 'name',
      tolerance: 0,
    },
    status: 201,
  });
  await c('POST', '/exercises', { body: exercise, status: 409, code: 2081 });
  await c('POST', '/exercises', { body: { ...exercise, id: 'x', solution: 'SELECT nope' }, status: 400, code: 1080 });
  await c('POST', '/exercises', { body: { ...exercise, id: 'y', template: 'nowhere' }, status: 409, code: 2082 });
  await c('GET', '/exercises', { status: 200 });
  await c('GET', '/exercises?set=lesson-1', { status: 200 });
  await c('GET', '/exercises/ages', { status: 200 });
  await c('GET', '/exercises/nothing', { status: 404, code: 2080 });
  await c('GET', '/exercises/ages/tables', { status: 200 });
  await c('PUT', '/exercises/ages', { body: { ...exercise, title: 'Ages again' }, status: 200 });
  await c('PUT', '/exercises/nothing', { body: { ...exercise, id: 'nothing' }, status: 404, code: 2080 });
  const student = await c('POST', '/tokens', {
    body: { name: 'pupil', role: 'read', databases: ['school'] },
    status: 201,
  });
  const pupil = { 'X-Service-Token': String(student.body?.tokens?.[0]?.secret) };
  await c('GET', '/exercises/ages', { headers: pupil, status: 200 });
  await c('POST', '/exercises/ages/check', {
    headers: pupil,
    body: { sql: 'SELECT name, age FROM pupils ORDER BY age' },
    status: 200,
  });
  await c('POST', '/exercises/ages/check', {
    headers: pupil,
    body: { sql: 'SELECT name FROM pupils WHERE age > 12' },
    status: 200,
  });
  await c('POST', '/exercises/ages/check', { headers: pupil, body: { sql: 'SELECT nope FROM pupils' }, status: 200 });
  await c('POST', '/exercises/older/check', {
    headers: pupil,
    body: { sql: 'UPDATE pupils SET age = 99' },
    status: 200,
  });
  await c('POST', '/exercises/ages/check', { headers: pupil, body: { sql: '' }, status: 400, code: 1081 });
  await c('GET', '/exercises/mine?set=lesson-1', { headers: pupil, status: 200 });
  await c('GET', '/exercises/mine', { status: 200 });
  await c('POST', '/exercises/nothing/check', { headers: pupil, body: { sql: 'SELECT 1' }, status: 404, code: 2080 });
  await c('POST', '/exercises', { headers: pupil, body: exercise, status: 403, code: 1030 });
  await c('GET', '/exercises/progress', { headers: pupil, status: 403, code: 1030 });
  await c('GET', '/exercises/progress?set=lesson-1', { status: 200 });
  await c(
    'GET',
    '/exercises/progress?set=lesson-1&format=csv&token=p*&stuck_attempts=2&stuck_minutes=5&at=2999-01-01T00:00:00Z',
    { status: 200 },
  );
  await c('GET', '/exercises/progress?at=yesterday', { status: 400, code: 1008 });
  await c('GET', '/exercises/evidence?set=lesson-1', { status: 200 });
  await c('GET', '/exercises/evidence?set=lesson-1&en_desarrollo=1&logrado=50%25&profundizado=2', { status: 200 });
  await c('GET', '/exercises/evidence', { status: 400, code: 1008 });
  await c('DELETE', '/exercises/older', { status: 200 });
  await c('DELETE', '/exercises/older', { status: 404, code: 2080 });
}

async function withoutToken(tt: Test, server: TestServer): Promise<void> {
  for (const { method, template, op } of conf.operations()) {
    const reply = await call(tt, conf, server, method, concrete(template), { headers: NO_TOKEN });
    if (op.security?.length === 0) tt.not(reply.status, 401, `${method} ${template} needs no token`);
    else {
      tt.equal(reply.status, 401, `${method} ${template} needs the token`);
      tt.equal(reply.body?.code, 1012);
    }
  }
}

t.test('multi-DB mode with a token: every operation and many error paths conform', async (tt) => {
  const server = await serve(tt, ['-dir', 'data', '-token', TOKEN, '-lock-timeout', '300ms'], {
    'X-Service-Token': TOKEN,
  });
  await withoutToken(tt, server);
  await databasesAndTables(tt, server);
  await sql(tt, server);
  await importExport(tt, server);
  await sessions(tt, server);
  await pilots(tt, server);
  await journalFeed(tt, server);
  await tokens(tt, server);
  await exercises(tt, server);
  await serviceAndUnmatched(tt, server);
});

/** Never ends by itself: SQLite counts forever. */
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

t.test('single-DB mode: 405s, the database list, truncation, timeouts, ended sessions', async (tt) => {
  const server = await serve(tt, [
    '-db',
    'class.db',
    '-session-timeout',
    '1s',
    '-max-result-rows',
    '2',
    '-query-timeout',
    '2s',
  ]);
  const c = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, server, method, url, x);
  const list = await c('GET', '/dbs', { status: 200 });
  tt.equal(list.body?.single, 'class.db', 'single-DB mode names its file');
  await c('GET', '/journal', { status: 403, code: 1022 });
  const single = await c('POST', '/dbs', { body: { db: 'other' }, status: 405, code: 7001 });
  tt.ok(single.headers.has('allow'), 'a 405 carries Allow (RFC 9110 §15.5.6)');
  await c('POST', '/exec', { body: { sql: 'CREATE DATABASE other' }, status: 405, code: 7001 });
  await c('POST', '/exec', { body: { sql: 'CREATE TABLE t (id INT PRIMARY KEY)' }, status: 200 });
  await c('GET', '/tables', { status: 200 });
  await c('GET', '/tables?db=class', { status: 200 });
  await c('GET', '/tables?db=other', { status: 404, code: 2001 });
  await c('GET', '/rows?table=t', { status: 200 });
  const cut = await c('POST', '/exec', {
    body: { sql: 'INSERT INTO t VALUES (1), (2), (3); SELECT * FROM t' },
    status: 200,
  });
  tt.equal(cut.body?.results?.[1]?.truncated, true, 'a result cut at -max-result-rows says truncated');
  await c('POST', '/exec', { body: { sql: RUNAWAY }, status: 400, code: 6007 });
  const held = await c('POST', '/tx/begin', { status: 200 });
  await c('POST', '/exec', {
    body: { sql: 'INSERT OR ROLLBACK INTO t VALUES (1)' },
    headers: { 'X-Service-Session': String(held.body?.session) },
    status: 400,
    code: 5007,
  });
  const timed = await c('POST', '/tx/begin', { status: 200 });
  await c('POST', `/exec?session=${String(timed.body?.session)}`, { body: { sql: RUNAWAY }, status: 400, code: 6008 });
  await c('POST', `/tx/commit?session=${String(timed.body?.session)}`, { status: 404, code: 5002 });
  const begun = await c('POST', '/tx/begin', { status: 200 });
  await c('POST', '/tx/begin', { body: {}, status: 409, code: 5004 });
  await sleep(2500);
  await c('POST', `/exec?session=${String(begun.body?.session)}`, {
    body: { sql: 'SELECT 1' },
    status: 404,
    code: 5003,
  });
  await c('POST', '/tx/begin', { body: {}, status: 200 });
});

t.test('a primary and its replica over JetStream: status, refusals and the takeover as documented', async (tt) => {
  const nats = await startNats(tt);
  const primary = await serve(tt, ['-dir', 'data', '-journal-nats', nats.url, '-node', 'p1']);
  const replica = await serve(tt, ['-dir', 'data', '-follow', nats.url, '-node', 'r1', '-min-seq-wait', '3s']);
  const p = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, primary, method, url, x);
  const r = (method: string, url: string, x?: Call): Promise<Reply> => call(tt, conf, replica, method, url, x);
  await p('POST', '/dbs', { body: { db: 'lesson' }, status: 201 });
  const created = await p('POST', '/exec', {
    body: { db: 'lesson', sql: 'CREATE TABLE t (id INT PRIMARY KEY)' },
    status: 200,
  });
  const seq = created.headers.get('x-journal-seq') ?? '';
  tt.match(seq, /^\d+$/, 'a primary says its journal seq in X-Journal-Seq');
  await p('GET', '/health', { status: 200 });
  await r('GET', '/health', { status: 200 });
  await r('GET', '/metrics', { status: 200 });
  await r('POST', '/exec', {
    body: { db: 'lesson', sql: 'SELECT count(*) FROM t' },
    headers: { 'X-Min-Seq': seq },
    status: 200,
  });
  await r('POST', '/exec', { body: { db: 'lesson', sql: 'INSERT INTO t VALUES (1)' }, status: 409, code: 7010 });
  await r('POST', '/tx/begin', { body: { db: 'lesson' }, status: 409, code: 7010 });
  await r('POST', '/dbs', { body: { db: 'other' }, status: 409, code: 7010 });
  const exercise = { id: 'count-t', set: 's', title: 'Count', template: 'lesson', solution: 'SELECT count(*) FROM t' };
  const written = await p('POST', '/exercises', { body: exercise, status: 201 });
  const onReplica = await r('GET', '/exercises?set=s', {
    headers: { 'X-Min-Seq': written.headers.get('x-journal-seq') ?? '' },
    status: 200,
  });
  tt.same(
    onReplica.body?.exercises?.map((e: { id: string }) => e.id),
    ['count-t'],
    "a replica has its primary's exercises",
  );
  await r('POST', '/exercises/count-t/check', { body: { sql: 'SELECT 0' }, status: 409, code: 7010 });
  await r('POST', '/exercises', { body: { ...exercise, id: 'other' }, status: 409, code: 7010 });
  await r('GET', '/tables?db=lesson', {
    headers: { 'X-Min-Seq': String(Number(seq) + 1000) },
    status: 409,
    code: 7011,
  });
  await p('POST', '/admin/promote', { status: 409, code: 7013 });
  await r('POST', '/admin/promote', { status: 200 });
  await p('POST', '/exec', { body: { db: 'lesson', sql: 'INSERT INTO t VALUES (2)' }, status: 409, code: 7012 });
  await r('POST', '/exec', { body: { db: 'lesson', sql: 'INSERT INTO t VALUES (3)' }, status: 200 });
});

t.test('over -max-connections: 503 as documented', async (tt) => {
  const server = await serve(tt, ['-dir', 'data', '-max-connections', '1']);
  const { port, hostname } = new URL(server.url);
  const holder = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => holder.once('connect', resolve).once('error', reject));
  await sleep(200);
  try {
    for (const url of ['/health', '/dbs', '/openapi.json']) {
      const reply = await call(tt, conf, server, 'GET', url, { status: 503, code: 6003 });
      tt.ok(reply.headers.get('retry-after'), `${url}: Retry-After`);
    }
  } finally {
    holder.destroy();
  }
});

// ── routes and coverage ───────────────────────────────────────────────────────

/** The router of the real Koa application, built in this process (the bus is never called). */
function appRouter(dir: string): Router {
  const parsed = parseCommandLine(['-dir', path.join(dir, 'data')], dir);
  if (parsed.kind !== 'config') throw new Error('no config');
  const { koa } = createApp(parsed.config, {} as CommandBus, new Readiness());
  const withRouter = koa.middleware.find((m) => (m as { router?: Router }).router !== undefined) as
    { router?: Router } | undefined;
  if (withRouter?.router === undefined) throw new Error('no router in the Koa application');
  return withRouter.router;
}

t.test('every route of the Koa router is documented, and every documented operation answered', async (tt) => {
  const router = appRouter(scratchDir(tt));
  const routes = new Set<string>();
  for (const layer of router.stack) {
    tt.type(layer.path, 'string', `route ${String(layer.path)} is a path`);
    const template = String(layer.path).replace(/:(\w+)/g, '{$1}');
    // HEAD is answered wherever GET is (the document says so once).
    for (const method of layer.methods.filter((m) => m !== 'HEAD')) routes.add(`${method} ${template}`);
  }
  const documented = new Set(conf.operations().map(({ method, template }) => `${method} ${template}`));
  for (const route of routes) tt.ok(documented.has(route), `route ${route} is documented`);
  for (const { method, template, op } of conf.operations()) {
    const key = `${method} ${template}`;
    // The console is served by a middleware before authentication, not by the router.
    if (!routes.has(key)) tt.ok(op.tags?.includes('console'), `documented ${key} is a route of the router`);
    const statuses = [...conf.seen]
      .filter((s) => s.startsWith(`${key} `))
      .map((s) => s.slice(key.length + 1))
      .sort();
    tt.ok(
      statuses.some((s) => s.startsWith('2')),
      `${key} answered a real request with a 2xx (seen: ${statuses.join(', ')})`,
    );
    tt.comment(`${key}: ${statuses.join(' ')}`);
  }
  tt.ok(conf.seen.size >= 60, `${conf.seen.size} distinct (operation, status) pairs checked`);
});

// ── the check can fail ────────────────────────────────────────────────────────

t.test('the check rejects responses that a wrong document would not describe', async (tt) => {
  const server = await serve(tt, ['-dir', 'data']);
  const health = await server.get('/health');
  const prometheus = await server.get('/metrics?format=prometheus');
  const missing = await server.get('/tables?db=nowhere');
  const wrong = (mutate: (doc: Json) => void): Conformance => {
    const copy = JSON.parse(JSON.stringify(conf.doc));
    mutate(copy);
    return new Conformance(copy);
  };
  tt.same(conf.problems('GET', '/health', health), [], 'the real document accepts them');
  tt.same(conf.problems('GET', '/metrics?format=prometheus', prometheus), []);
  tt.same(conf.problems('GET', '/tables?db=nowhere', missing), []);

  const fails = (problems: string[], pattern: RegExp, label: string): void => {
    tt.ok(
      problems.some((problem) => pattern.test(problem)),
      `${label}: ${problems.join('; ') || 'no problem found'}`,
    );
  };
  const shape = wrong((doc) => (doc.components.schemas.Health.properties.timeUnix = { type: 'string' }));
  fails(shape.problems('GET', '/health', health), /timeUnix must be string/, 'a wrong shape fails');
  const closed = wrong((doc) => delete doc.components.schemas.Health.properties.ready);
  fails(
    closed.problems('GET', '/health', health),
    /must NOT have additional properties/,
    'an undocumented field fails',
  );
  const status = wrong((doc) => delete doc.paths['/tables'].get.responses['404']);
  fails(
    status.problems('GET', '/tables?db=nowhere', missing),
    /status 404 not documented/,
    'an undocumented status fails',
  );
  const code = wrong(
    (doc) =>
      (doc.paths['/tables'].get.responses['404'].content['application/json'].schema.allOf[1].properties.code.enum = [
        2002,
      ]),
  );
  fails(
    code.problems('GET', '/tables?db=nowhere', missing),
    /code must be equal to one of the allowed values/,
    'an undocumented code fails',
  );
  const type = wrong((doc) => delete doc.paths['/metrics'].get.responses['200'].content['text/plain']);
  fails(
    type.problems('GET', '/metrics?format=prometheus', prometheus),
    /content type text\/plain not documented/,
    'an undocumented content type fails',
  );
  const header = wrong(
    (doc) =>
      (doc.paths['/health'].get.responses['200'].headers = {
        'X-Missing': { required: true, schema: { type: 'string' } },
      }),
  );
  fails(
    header.problems('GET', '/health', health),
    /required header X-Missing missing/,
    'a missing required header fails',
  );
  fails(
    conf.problems('GET', '/health?verbose=1', health),
    /query parameter verbose not documented/,
    'an undocumented query parameter fails',
  );
  fails(conf.problems('GET', '/nowhere/at/all', health), /undocumented path/, 'a 200 on an undocumented path fails');
  const created = { ...health, status: 200, body: { ok: true, results: [] } };
  tt.same(conf.problems('POST', '/exec', created, { body: { sql: 'SELECT 1' } }), [], 'a documented exchange passes');
  fails(
    conf.problems('POST', '/exec', created, { body: { sql: 1 } }),
    /request body/,
    'a request body that is not the documented one fails',
  );
  fails(
    conf.problems('POST', '/exec', {
      ...created,
      body: { ok: true, results: [{ columns: [], rows: [], message: 'MERGE 1' }] },
    }),
    /message must match pattern/,
    'an undocumented message fails',
  );
});
