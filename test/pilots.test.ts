/**
 * Classroom pilot records over HTTP, against the real server and the real replay tool, both as
 * child processes:
 *
 * - POST /pilots: 201 for a full record of every decision, 400 [SQ1016] with
 *   every violation at its path, 400 [SQ1017] naming the kind of personal data
 *   and never echoing it;
 * - the decisions per scope (same level, subject and objective): nothing after
 *   retirar (409 [SQ2013]), another commit after corregir (409 [SQ2014]),
 *   anything after conservar or volver_a_pilotar; concurrent POSTs included;
 * - GET /pilots (filters, pagination), /pilots/:id, /pilots/schema,
 *   /pilots/summary (exact figures, group_by);
 * - the token, restart, replay, the hidden system database, immutability.
 *
 * Build first (`npx tsc -p tsconfig.json`): the server and the replay tool run from dist/.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { runReplay, startServer, type Reply, type TestServer } from './helpers/server';
import {
  BY_COMMIT,
  BY_SUBJECT,
  EXPECTED as SUMMARY,
  INVALID_RECORD,
  KNOWN_SET,
  byDecision,
  evidence,
  type Evidence,
} from './helpers/pilot-fixtures';
import { scratchDir } from './helpers/scratch-dir';

// Every server is a child process with engine sub-processes: on a loaded machine a start and a
// stop can take seconds each.
t.setTimeout(180_000);

const TOKEN = 's3cret';
const PILOTS_FILE = '_sqlscribe_pilots.db';
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;
const DECISIONS = ['conservar', 'corregir', 'volver_a_pilotar', 'retirar'] as const;

// ── helpers ──────────────────────────────────────────────────────────────────

/** Starts a server whose cwd is a fresh scratch directory, stopped when `t` ends. */
async function serve(
  t: Test,
  args: string[] = ['-dir', 'data'],
  headers?: Record<string, string>,
): Promise<{ server: TestServer; cwd: string }> {
  const cwd = scratchDir(t);
  const server = await startServer(args, headers === undefined ? { cwd } : { cwd, headers });
  t.teardown(() => server.stop());
  return { server, cwd };
}

function describeReply(reply: Reply): string {
  return `${reply.status} ${reply.text.slice(0, 600)}`;
}

/** Asserts a catalog error: status, `ok:false` and `code`. */
function assertError(t: Test, reply: Reply, status: number, code: number, what: string): void {
  t.equal(reply.status, status, `${what}: status ${status}`);
  t.equal(reply.body?.ok, false, `${what}: ok false`);
  t.equal(reply.body?.code, code, `${what}: code ${code} (${reply.text.slice(0, 200)})`);
}

interface Scope {
  level?: string;
  subject?: string;
  objective?: string;
  class_codes?: string[];
}

/** A complete, valid record: every field, the optional notes included. */
function pilot(overrides: Record<string, unknown> = {}, scope: Scope = {}): Record<string, unknown> {
  return {
    date: '2026-11-20',
    responsible_role: 'docente de aula',
    scope: { level: '8B', subject: 'matematica', objective: 'OA 3', class_codes: ['8B-1', '8B-2'], ...scope },
    commit: 'a1b2c3d',
    planned_minutes: 45,
    actual_minutes: 50,
    aggregate_evidence: { aun_no_observable: 2, en_desarrollo: 10, logrado: 15, profundizado: 3 },
    incidents: ['el proyector falló 10 minutos'],
    decision: 'conservar',
    notes_without_personal_data: 'el grupo trabajó en parejas; 45 minutos, OA 3, 7/10',
    ...overrides,
  };
}

/** POST /pilots that must answer 201; gives the body. */
async function created(server: TestServer, record: Record<string, unknown>, what = 'POST /pilots'): Promise<any> {
  const reply = await server.post('/pilots', record);
  if (reply.status !== 201) throw new Error(`${what}: expected 201, got ${describeReply(reply)}`);
  return reply.body;
}

async function listIds(server: TestServer, query: string): Promise<{ total: number; ids: number[] }> {
  const reply = await server.get(`/pilots${query}`);
  if (reply.status !== 200) throw new Error(`GET /pilots${query}: expected 200, got ${describeReply(reply)}`);
  return { total: reply.body.total as number, ids: (reply.body.pilots as Array<{ id: number }>).map((p) => p.id) };
}

// ── the known set of the summary ─────────────────────────────────────────────

function known(
  date: string,
  level: string,
  subject: string,
  objective: string,
  commit: string,
  planned: number,
  actual: number,
  evidence: Evidence,
  decision: string,
): Record<string, unknown> {
  const [aun_no_observable, en_desarrollo, logrado, profundizado] = evidence;
  return pilot(
    {
      date,
      commit,
      planned_minutes: planned,
      actual_minutes: actual,
      aggregate_evidence: { aun_no_observable, en_desarrollo, logrado, profundizado },
      decision,
    },
    { level, subject, objective, class_codes: [`${level}-1`] },
  );
}

const KNOWN = KNOWN_SET.map(([date, level, subject, objective, commit, planned, actual, counts, decision]) =>
  known(date, level, subject, objective, commit, planned, actual, counts, decision),
);

async function seedKnown(server: TestServer): Promise<void> {
  for (const [index, record] of KNOWN.entries()) {
    const body = await created(server, record, `known pilot ${index + 1}`);
    if (body.id !== index + 1) throw new Error(`known pilot ${index + 1} got id ${String(body.id)}`);
  }
}

const EXPECTED = { ok: true, ...SUMMARY };

function differences(actual: unknown, expected: unknown, where: string, out: string[] = []): string[] {
  if (typeof expected === 'number') {
    const fraction = where.includes('share');
    const ok = typeof actual === 'number' && (fraction ? Math.abs(actual - expected) <= 1e-4 : actual === expected);
    if (!ok) out.push(`${where}: ${JSON.stringify(actual)} instead of ${expected}`);
  } else if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      out.push(`${where}: ${JSON.stringify(actual)?.slice(0, 200)} is not an array of ${expected.length}`);
    else expected.forEach((item, i) => differences(actual[i], item, `${where}[${i}]`, out));
  } else if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') out.push(`${where}: ${JSON.stringify(actual)} is not an object`);
    else {
      const keys = Object.keys(actual).sort().join(',');
      if (keys !== Object.keys(expected).sort().join(','))
        out.push(`${where}: keys ${keys} instead of ${Object.keys(expected).sort().join(',')}`);
      for (const [key, value] of Object.entries(expected))
        differences((actual as Record<string, unknown>)[key], value, `${where}.${key}`, out);
    }
  } else if (actual !== expected)
    out.push(`${where}: ${JSON.stringify(actual)} instead of ${JSON.stringify(expected)}`);
  return out;
}

// ── POST /pilots ─────────────────────────────────────────────────────────────

t.test('creates a full record of every decision', async (t) => {
  const { server } = await serve(t);
  const ids: number[] = [];
  for (const [index, decision] of DECISIONS.entries()) {
    const record = pilot({ decision, commit: `abcdef${index}` }, { objective: `OA ${index + 1}` });
    const reply = await server.post('/pilots', record);
    t.equal(reply.status, 201, `${decision}: 201 (${reply.text.slice(0, 200)})`);
    t.equal(reply.body?.ok, true, `${decision}: ok`);
    t.ok(Number.isSafeInteger(reply.body?.id) && reply.body.id > 0, `${decision}: a positive integer id`);
    t.match(reply.body?.created, ISO_TIME, `${decision}: created is an ISO time`);
    t.same(reply.body?.pilot, record, `${decision}: the record as sent`);
    t.same(Object.keys(reply.body ?? {}).sort(), ['created', 'id', 'ok', 'pilot'], `${decision}: the response fields`);
    ids.push(reply.body?.id as number);
    const back = await server.get(`/pilots/${String(reply.body?.id)}`);
    t.same(back.body?.pilot, record, `${decision}: GET /pilots/:id gives it back`);
  }
  t.equal(new Set(ids).size, 4, 'four distinct ids');
  t.same(
    [...ids].sort((a, b) => a - b),
    ids,
    'ids grow',
  );
  t.equal((await listIds(server, '')).total, 4, 'four stored');
});

t.test('creates a record without the optional notes, with no incidents', async (t) => {
  const { server } = await serve(t);
  const record = pilot({ incidents: [] });
  delete record.notes_without_personal_data;
  const body = await created(server, record);
  t.same(body.pilot, record);
  t.notOk('notes_without_personal_data' in body.pilot, 'no notes added');
});

t.test('refuses an invalid record with every violation at its path', async (t) => {
  const { server } = await serve(t);
  const reply = await server.post('/pilots', INVALID_RECORD);
  assertError(t, reply, 400, 1016, 'fifteen problems');
  const violations = (reply.body?.violations ?? []) as Array<{ path: string; message: string }>;
  t.same(
    violations.map((v) => v.path).sort(),
    [
      '/actual_minutes',
      '/aggregate_evidence/aun_no_observable',
      '/aggregate_evidence/en_desarrollo',
      '/aggregate_evidence/extra',
      '/aggregate_evidence/profundizado',
      '/commit',
      '/date',
      '/decision',
      '/incidents/1',
      '/notes_without_personal_data',
      '/planned_minutes',
      '/responsible_role',
      '/scope/class_codes',
      '/scope/objective',
      '/student',
    ],
    'every violation, each at its path',
  );
  t.ok(
    violations.every((v) => typeof v.message === 'string' && v.message.length > 0),
    'each with a message',
  );

  const missing = await server.post('/pilots', {});
  assertError(t, missing, 400, 1016, 'an empty object');
  t.same(
    (missing.body?.violations as Array<{ path: string }>).map((v) => v.path).sort(),
    [
      '/actual_minutes',
      '/aggregate_evidence',
      '/commit',
      '/date',
      '/decision',
      '/incidents',
      '/planned_minutes',
      '/responsible_role',
      '/scope',
    ],
    'every required field',
  );

  const one = await server.post('/pilots', pilot({ planned_minutes: '45' }));
  assertError(t, one, 400, 1016, 'one problem');
  t.same(
    (one.body?.violations as Array<{ path: string }>).map((v) => v.path),
    ['/planned_minutes'],
    'only that one',
  );

  // A body that is not a JSON object is a bad request before it is a bad record.
  assertError(t, await server.post('/pilots', [pilot()]), 400, 1006, 'an array');
  for (const body of ['pilot', 42, null]) {
    const reply = await server.post('/pilots', body);
    t.equal(reply.status, 400, `a body of ${JSON.stringify(body)}: 400`);
    t.equal(reply.body?.ok, false, `a body of ${JSON.stringify(body)}: ok false`);
  }

  assertError(
    t,
    await server.request('POST', '/pilots', { rawBody: '{"date":', headers: { 'content-type': 'application/json' } }),
    400,
    1009,
    'malformed JSON',
  );
  t.equal((await listIds(server, '')).total, 0, 'nothing stored');
});

t.test('refuses personal data by kind without echoing it', async (t) => {
  const { server, cwd } = await serve(t, [
    '-dir',
    'data',
    '-log-file',
    'journal/statements.jsonl',
    '-log-level',
    'all',
    '-log-json',
  ]);
  // Something stored first, so that the journal exists and the pilots database is open.
  await created(server, pilot());
  const cases: Array<{ secret: string; kind: string; extra?: string[] }> = [
    { secret: 'ana.perez@colegio.cl', kind: 'e-mail address' },
    { secret: '+56 9 1234 5678', kind: 'phone number', extra: ['912345678', '56912345678'] },
    { secret: '912345678', kind: 'phone number' },
    { secret: '(02) 2345 6789', kind: 'phone number', extra: ['223456789'] },
    { secret: '12.345.678-9', kind: 'national identity number', extra: ['12345678'] },
    { secret: '12345678-K', kind: 'national identity number', extra: ['12345678'] },
    { secret: '12345678Z', kind: 'national identity number', extra: ['12345678'] },
  ];
  for (const { secret, kind, extra = [] } of cases) {
    for (const field of ['notes', 'incidents'] as const) {
      const text = `avisar a la apoderada: ${secret}`;
      const record =
        field === 'notes'
          ? pilot({ notes_without_personal_data: text })
          : pilot({ incidents: ['sin problemas', text] });
      const reply = await server.post('/pilots', record);
      assertError(t, reply, 400, 1017, `${secret} in ${field}`);
      t.same(reply.body?.kinds, [kind], `${secret} in ${field}: names the kind`);
      for (const echo of [secret, ...extra])
        t.notOk(reply.text.includes(echo), `${secret} in ${field}: ${echo} not echoed`);
    }
  }
  const both = await server.post(
    '/pilots',
    pilot({
      notes_without_personal_data: 'escribir a ana.perez@colegio.cl',
      incidents: ['rut 12.345.678-9', '+56 9 1234 5678'],
    }),
  );
  assertError(t, both, 400, 1017, 'three kinds');
  t.same(
    [...(both.body?.kinds as string[])].sort(),
    ['e-mail address', 'national identity number', 'phone number'],
    'all three named',
  );

  t.equal((await listIds(server, '')).total, 1, 'nothing more stored');
  const journal = fs.readFileSync(path.join(cwd, 'journal', 'statements.jsonl'), 'utf8');
  const logs = server.stdout() + server.stderr();
  for (const { secret } of cases) {
    t.notOk(journal.includes(secret), `${secret} not in the journal`);
    t.notOk(logs.includes(secret), `${secret} not in the server output`);
  }
});

// ── decisions per scope ──────────────────────────────────────────────────────

t.test('refuses any further pilot of a scope after retirar', async (t) => {
  const { server } = await serve(t);
  const retired = await created(server, pilot({ decision: 'retirar' }));
  for (const decision of DECISIONS) {
    const reply = await server.post(
      '/pilots',
      pilot({ decision, commit: 'fedcba9', date: '2026-12-01' }, { class_codes: ['8C-1'] }),
    );
    assertError(t, reply, 409, 2013, `${decision} after retirar`);
  }
  // Another scope: differs in one of level, subject, objective.
  await created(server, pilot({ decision: 'conservar' }, { objective: 'OA 4' }), 'another objective');
  await created(server, pilot({ decision: 'conservar' }, { subject: 'ciencias' }), 'another subject');
  await created(server, pilot({ decision: 'conservar' }, { level: '8A' }), 'another level');
  t.pass('other scopes are still accepted');
  const list = await listIds(server, '');
  t.equal(list.total, 4, 'only the retirar and the three other scopes stored');
  t.equal(list.ids[0], retired.id);
});

t.test('requires another commit after corregir', async (t) => {
  const { server } = await serve(t);
  await created(server, pilot({ decision: 'corregir', commit: 'a1b2c3d' }));
  for (const decision of DECISIONS) {
    assertError(
      t,
      await server.post('/pilots', pilot({ decision, commit: 'a1b2c3d' })),
      409,
      2014,
      `${decision} with the same commit`,
    );
  }
  const next = await server.post('/pilots', pilot({ decision: 'corregir', commit: 'b2c3d4e' }));
  t.equal(next.status, 201, `another commit: 201 (${next.text.slice(0, 200)})`);
  assertError(
    t,
    await server.post('/pilots', pilot({ decision: 'conservar', commit: 'b2c3d4e' })),
    409,
    2014,
    'the second corrected commit again',
  );
  t.equal(
    (await server.post('/pilots', pilot({ decision: 'conservar', commit: 'a1b2c3d' }))).status,
    201,
    'the first commit again, now different from the last',
  );
  t.equal(
    (await server.post('/pilots', pilot({ decision: 'conservar', commit: 'a1b2c3d' }))).status,
    201,
    'after conservar, the same commit is fine',
  );
  t.equal(
    (await server.post('/pilots', pilot({ decision: 'conservar', commit: 'a1b2c3d' }, { objective: 'OA 9' }))).status,
    201,
    'another scope is unaffected',
  );
});

t.test('accepts any decision after conservar or volver_a_pilotar', async (t) => {
  const { server } = await serve(t);
  for (const before of ['conservar', 'volver_a_pilotar'] as const) {
    for (const [index, after] of DECISIONS.entries()) {
      const scope = { objective: `${before} then ${after}` };
      await created(server, pilot({ decision: before, commit: 'a1b2c3d' }, scope), `${before} first`);
      const reply = await server.post(
        '/pilots',
        pilot({ decision: after, commit: 'a1b2c3d', date: `2026-11-2${index}` }, scope),
      );
      t.equal(reply.status, 201, `${after} with the same commit after ${before}: 201 (${reply.text.slice(0, 200)})`);
    }
  }
  // A longer sequence of one scope, the same commit throughout until corregir.
  for (const decision of [
    'conservar',
    'conservar',
    'volver_a_pilotar',
    'volver_a_pilotar',
    'conservar',
    'corregir',
  ] as const) {
    t.equal((await server.post('/pilots', pilot({ decision }))).status, 201, `${decision} in sequence`);
  }
  t.equal(
    (await server.post('/pilots', pilot({ decision: 'retirar', commit: 'b2c3d4e' }))).status,
    201,
    'retirar with the new commit',
  );
});

t.test('lets exactly one of concurrent pilots through when the scope allows only one', async (t) => {
  const { server } = await serve(t);
  await created(server, pilot({ decision: 'corregir', commit: 'a1b2c3d' }));
  const corrections = await Promise.all(
    Array.from({ length: 10 }, () => server.post('/pilots', pilot({ decision: 'corregir', commit: 'b2c3d4e' }))),
  );
  t.same(
    corrections.map((r) => r.status).sort(),
    [201, ...Array<number>(9).fill(409)],
    'one 201 and nine 409 after corregir',
  );
  t.same(
    corrections.filter((r) => r.status === 409).map((r) => r.body?.code),
    Array<number>(9).fill(2014),
    'the 409s are [SQ2014]',
  );
  t.equal((await listIds(server, '?commit=b2c3d4e')).total, 1, 'one stored');

  const retirements = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      server.post('/pilots', pilot({ decision: 'retirar', commit: `c3d4e5${i}` }, { objective: 'OA 5' })),
    ),
  );
  t.same(
    retirements.map((r) => r.status).sort(),
    [201, ...Array<number>(9).fill(409)],
    'one 201 and nine 409 for concurrent retirar',
  );
  t.same(
    retirements.filter((r) => r.status === 409).map((r) => r.body?.code),
    Array<number>(9).fill(2013),
    'the 409s are [SQ2013]',
  );
  t.equal((await listIds(server, '?decision=retirar')).total, 1, 'one retirar stored');
});

// ── GET /pilots, /pilots/:id ─────────────────────────────────────────────────

t.test('lists pilots with each filter', async (t) => {
  const { server } = await serve(t);
  await seedKnown(server);
  const cases: Array<[string, number[]]> = [
    ['', [1, 2, 3, 4, 5, 6]],
    ['?decision=conservar', [2, 5]],
    ['?decision=corregir', [1, 6]],
    ['?decision=retirar', [4]],
    ['?commit=a1b2c3d', [1, 3]],
    ['?commit=ffffff0', []],
    ['?subject=lenguaje', [3, 5]],
    ['?level=1M', [3, 4]],
    ['?from=2026-11-10', [3, 4, 5, 6]],
    ['?to=2026-11-10', [1, 2, 3]],
    ['?from=2026-11-10&to=2026-11-12', [3, 4]],
    ['?from=2026-11-21', []],
    ['?subject=matematica&level=8B', [1, 2, 6]],
    ['?decision=conservar&level=8B&commit=c3d4e5f', [5]],
    ['?subject=matematica&from=2026-11-05&to=2026-11-15', [2, 4]],
  ];
  for (const [query, ids] of cases) {
    const list = await listIds(server, query);
    t.same(list, { total: ids.length, ids }, `GET /pilots${query}`);
  }
  const reply = await server.get('/pilots?level=1M');
  t.equal(reply.body.ok, true);
  t.equal(reply.body.pilots[0].id, 3);
  t.match(reply.body.pilots[0].created, ISO_TIME);
  t.same(reply.body.pilots[0].pilot, KNOWN[2], 'each item carries the record');
});

t.test('pages the list with limit and offset', async (t) => {
  const { server } = await serve(t);
  for (let i = 1; i <= 30; i++) await created(server, pilot({ planned_minutes: i }, { objective: `OA ${i}` }));
  const first = await server.get('/pilots');
  t.equal(first.body.limit, 25, 'default limit 25');
  t.equal(first.body.offset, 0, 'default offset 0');
  t.equal(first.body.total, 30);
  t.same(
    first.body.pilots.map((p: { id: number }) => p.id),
    Array.from({ length: 25 }, (_, i) => i + 1),
    'the first 25, in id order',
  );
  t.same(await listIds(server, '?limit=10&offset=25'), { total: 30, ids: [26, 27, 28, 29, 30] }, 'the last page');
  t.same(await listIds(server, '?limit=3&offset=4'), { total: 30, ids: [5, 6, 7] }, 'a middle page');
  t.same(await listIds(server, '?offset=40'), { total: 30, ids: [] }, 'past the end');
  t.same(await listIds(server, '?limit=2&decision=conservar&offset=1'), { total: 30, ids: [2, 3] }, 'with a filter');
  const clamped = await server.get('/pilots?limit=5000');
  t.equal(clamped.body.limit, 1000, 'limit clamped to 1000');
  t.equal(clamped.body.pilots.length, 30);
  t.equal((await server.get('/pilots?limit=1000')).body.limit, 1000);
});

t.test('refuses bad filters and pagination with 1008', async (t) => {
  const { server } = await serve(t);
  for (const query of [
    'decision=seguir',
    'decision=Conservar',
    'decision=',
    'from=2026/11/20',
    'from=20261120',
    'to=ayer',
    'to=2026-11-2',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'offset=-1',
    'offset=x',
    'decision=conservar&decision=corregir',
    'limit=1&limit=2',
  ]) {
    assertError(t, await server.get(`/pilots?${query}`), 400, 1008, query);
  }
});

t.test('returns one pilot by id and 404 for an unknown one', async (t) => {
  const { server } = await serve(t);
  const stored = await created(server, pilot());
  const reply = await server.get(`/pilots/${String(stored.id)}`);
  t.equal(reply.status, 200);
  t.same(
    reply.body,
    { ok: true, id: stored.id, created: stored.created, pilot: pilot() },
    'id, created and the record',
  );
  for (const id of ['999', 'abc', '0', '-1', '1.5', '1e0', '99999999999999999999']) {
    assertError(t, await server.get(`/pilots/${id}`), 404, 2012, `/pilots/${id}`);
  }
});

// ── GET /pilots/schema, /pilots/summary ──────────────────────────────────────

t.test('publishes the draft 2020-12 schema of the record', async (t) => {
  const { server } = await serve(t);
  const reply = await server.get('/pilots/schema');
  t.equal(reply.status, 200);
  const schema = reply.body;
  t.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', 'draft 2020-12');
  t.equal(schema.additionalProperties, false, 'closed at the top');
  t.equal(schema.properties.aggregate_evidence.additionalProperties, false, 'closed in aggregate_evidence');
  t.not(schema.properties.scope.additionalProperties, false, 'open in scope');
  t.same([...schema.required].sort(), [
    'actual_minutes',
    'aggregate_evidence',
    'commit',
    'date',
    'decision',
    'incidents',
    'planned_minutes',
    'responsible_role',
    'scope',
  ]);
  t.same([...schema.properties.scope.required].sort(), ['class_codes', 'level', 'objective', 'subject']);
  t.same([...schema.properties.aggregate_evidence.required].sort(), [
    'aun_no_observable',
    'en_desarrollo',
    'logrado',
    'profundizado',
  ]);
  t.same([...schema.properties.decision.enum].sort(), ['conservar', 'corregir', 'retirar', 'volver_a_pilotar']);
  // The published schema is usable by a client: it accepts what the service accepts and refuses what it refuses.
  const ajv = new Ajv2020({ allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  t.ok(validate(pilot()), 'a full record passes');
  t.ok(validate(pilot({}, { room: 'sala 12' } as Scope)), 'an extra scope property passes');
  t.notOk(validate(pilot({ extra: 1 })), 'an extra top-level property fails');
  t.notOk(validate(pilot({ date: '2026-02-30' })), 'an impossible date fails');
  t.notOk(validate(pilot({ commit: 'A1B2C3D' })), 'an uppercase commit fails');
});

t.test('summarizes a known set with exact figures', async (t) => {
  const { server } = await serve(t);
  const empty = await server.get('/pilots/summary');
  t.equal(empty.status, 200);
  t.same(
    differences(
      empty.body,
      {
        ok: true,
        count: 0,
        by_decision: byDecision(0, 0, 0, 0),
        evidence: { ...evidence([0, 0, 0, 0]), by_level: {} },
        minutes: { planned: 0, actual: 0, overrun: 0, overrun_share: 0 },
        scopes: [],
      },
      'empty',
    ),
    [],
    'no pilots: zeroes',
  );
  await seedKnown(server);
  const reply = await server.get('/pilots/summary');
  t.equal(reply.status, 200);
  t.same(differences(reply.body, EXPECTED, 'summary'), [], 'counts, evidence, minutes, scopes');
});

t.test('groups the summary by commit or by subject', async (t) => {
  const { server } = await serve(t);
  await seedKnown(server);
  const byCommit = await server.get('/pilots/summary?group_by=commit');
  t.equal(byCommit.status, 200);
  t.same(differences(byCommit.body, { ...EXPECTED, groups: BY_COMMIT }, 'by commit'), [], 'by commit');
  const bySubject = await server.get('/pilots/summary?group_by=subject');
  t.equal(bySubject.status, 200);
  t.same(differences(bySubject.body, { ...EXPECTED, groups: BY_SUBJECT }, 'by subject'), [], 'by subject');
  for (const query of ['group_by=level', 'group_by=', 'group_by=Commit', 'group_by=commit&group_by=subject']) {
    assertError(t, await server.get(`/pilots/summary?${query}`), 400, 1008, query);
  }
});

// ── token, restart, replay, hidden database, immutability ────────────────────

t.test('requires the token on every pilot endpoint', async (t) => {
  const { server } = await serve(t, ['-dir', 'data', '-token', TOKEN]);
  const endpoints: Array<[string, string, unknown]> = [
    ['POST', '/pilots', pilot()],
    ['GET', '/pilots', undefined],
    ['GET', '/pilots/1', undefined],
    ['GET', '/pilots/schema', undefined],
    ['GET', '/pilots/summary', undefined],
    ['GET', '/pilots/summary?group_by=commit', undefined],
  ];
  for (const [method, p, body] of endpoints) {
    const options = body === undefined ? {} : { body };
    assertError(t, await server.request(method, p, options), 401, 1012, `${method} ${p} without a token`);
    assertError(
      t,
      await server.request(method, p, { ...options, headers: { 'X-Service-Token': 'wrong' } }),
      401,
      1012,
      `${method} ${p} with a wrong token`,
    );
    assertError(
      t,
      await server.request(method, p, { ...options, headers: { Authorization: 'Bearer wrong' } }),
      401,
      1012,
      `${method} ${p} with a wrong bearer`,
    );
  }
  t.equal(
    (await server.get('/pilots', { 'X-Service-Token': TOKEN })).body?.total,
    0,
    'nothing was stored without the token',
  );
  const withToken: number[] = [];
  for (const [method, p, body] of endpoints) {
    const options = body === undefined ? {} : { body };
    withToken.push((await server.request(method, p, { ...options, headers: { 'X-Service-Token': TOKEN } })).status);
    withToken.push(
      (await server.request(method, p, { ...options, headers: { Authorization: `Bearer ${TOKEN}` } })).status,
    );
  }
  // Two POSTs of the same conservar record: both accepted.
  t.same(
    withToken,
    [201, 201, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
    'every endpoint answers with either header',
  );
});

t.test('keeps the records across a restart', async (t) => {
  const cwd = scratchDir(t);
  const args = ['-dir', 'data', '-log-file', 'journal/statements.jsonl'];
  const first = await startServer(args, { cwd });
  t.teardown(() => first.stop());
  await created(first, pilot({ decision: 'retirar' }, { objective: 'OA 1' }));
  await created(first, pilot({ decision: 'corregir', commit: 'a1b2c3d' }, { objective: 'OA 2' }));
  await created(first, pilot({ decision: 'conservar' }, { objective: 'OA 3' }));
  const before = (await first.get('/pilots')).body;
  const summaryBefore = (await first.get('/pilots/summary')).body;
  t.equal(await first.stop(), 0, 'the first server stops cleanly');

  const second = await startServer(args, { cwd });
  t.teardown(() => second.stop());
  const after = await second.get('/pilots');
  t.same(after.body, before, 'the same list, ids and created times included');
  t.same((await second.get('/pilots/2')).body?.pilot, before.pilots[1].pilot, 'GET /pilots/:id');
  t.same((await second.get('/pilots/summary')).body, summaryBefore, 'the same summary');
  assertError(
    t,
    await second.post('/pilots', pilot({ decision: 'conservar' }, { objective: 'OA 1' })),
    409,
    2013,
    'the retired scope is still retired',
  );
  assertError(
    t,
    await second.post('/pilots', pilot({ decision: 'conservar', commit: 'a1b2c3d' }, { objective: 'OA 2' })),
    409,
    2014,
    'the corrected commit is still refused',
  );
  const next = await created(second, pilot({ decision: 'conservar' }, { objective: 'OA 3' }));
  t.equal(next.id, 4, 'the next id follows');
});

t.test('rebuilds the records by replaying the journal', async (t) => {
  const cwd = scratchDir(t);
  const server = await startServer(['-dir', 'data', '-log-file', 'journal/statements.jsonl'], { cwd });
  t.teardown(() => server.stop());
  t.equal((await server.post('/dbs', { db: 'shop' })).status, 201, 'a user database beside');
  t.equal((await server.exec('shop', 'CREATE TABLE t (a INT); INSERT INTO t VALUES (1)')).status, 200);
  await seedKnown(server);
  assertError(
    t,
    await server.post('/pilots', KNOWN[3] as Record<string, unknown>),
    409,
    2013,
    'a refused pilot in between',
  );
  await created(server, pilot({ decision: 'conservar' }, { objective: 'OA 8' }));
  const live = (await server.get('/pilots')).body.pilots as Array<{ id: number; created: string; pilot: unknown }>;
  t.equal(await server.stop(), 0, 'the server stops cleanly');

  const out = path.join(cwd, 'rebuilt');
  const run = await runReplay(['-log-file', 'journal/statements.jsonl', '-out', out, '-verify', 'data'], cwd);
  t.equal(run.code, 0, `replay -verify exits 0 (${run.stderr.trim().slice(-600)})`);
  const file = path.join(out, PILOTS_FILE);
  t.ok(fs.existsSync(file), `${PILOTS_FILE} rebuilt`);
  t.ok(fs.existsSync(path.join(out, 'shop.db')), 'the user database rebuilt too');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, created, record FROM pilots ORDER BY id').all() as Array<{
      id: number;
      created: string;
      record: string;
    }>;
    t.same(
      rows.map((r) => ({ id: r.id, created: r.created, pilot: JSON.parse(r.record) as unknown })),
      live,
      'the rebuilt records equal the live ones',
    );
  } finally {
    db.close();
  }

  // -verify really compares the pilot records: a tampered live copy must not verify.
  const tampered = path.join(cwd, 'tampered');
  fs.cpSync(path.join(cwd, 'data'), tampered, { recursive: true });
  const live2 = new Database(path.join(tampered, PILOTS_FILE));
  try {
    live2.prepare("UPDATE pilots SET decision = 'conservar' WHERE id = 4").run();
  } finally {
    live2.close();
  }
  const mismatch = await runReplay(
    ['-log-file', 'journal/statements.jsonl', '-out', path.join(cwd, 'rebuilt-2'), '-verify', 'tampered'],
    cwd,
  );
  t.not(mismatch.code, 0, 'replay -verify against tampered records fails');
});

t.test("keeps the pilots database out of the clients' reach", async (t) => {
  const { server, cwd } = await serve(t);
  t.equal((await server.post('/dbs', { db: 'shop' })).status, 201);
  await created(server, pilot());
  t.ok(fs.existsSync(path.join(cwd, 'data', PILOTS_FILE)), `${PILOTS_FILE} is in the data directory`);
  const dbs = await server.get('/dbs');
  t.equal(dbs.status, 200);
  t.same(dbs.body.dbs, ['shop.db'], 'GET /dbs lists the user database only');
  const show = await server.exec(undefined, 'SHOW DATABASES');
  t.notOk(show.text.includes('_sqlscribe'), 'SHOW DATABASES does not list it');
  for (const name of ['_sqlscribe_pilots', PILOTS_FILE]) {
    for (const p of [`/tables?db=${name}`, `/schema?db=${name}&table=pilots`, `/rows?db=${name}&table=pilots`]) {
      assertError(t, await server.get(p), 400, 1011, `GET ${p}`);
    }
    assertError(t, await server.exec(name, 'SELECT * FROM pilots'), 400, 1011, `POST /exec on ${name}`);
    assertError(
      t,
      await server.exec(name, "UPDATE pilots SET decision = 'conservar'"),
      400,
      1011,
      `an UPDATE on ${name}`,
    );
    assertError(t, await server.post('/tx/begin', { db: name }), 400, 1011, `POST /tx/begin on ${name}`);
    assertError(t, await server.post('/dbs', { db: name }), 400, 1011, `POST /dbs ${name}`);
  }
  t.equal((await server.exec(undefined, 'DROP DATABASE _sqlscribe_pilots')).status, 400, 'DROP DATABASE refused');
  t.equal((await server.get('/pilots')).body.total, 1, 'the record is untouched');
});

t.test('stores the pilots beside a single database', async (t) => {
  const { server, cwd } = await serve(t, ['-db', 'app.db']);
  await created(server, pilot());
  t.ok(fs.existsSync(path.join(cwd, PILOTS_FILE)), `${PILOTS_FILE} beside app.db`);
  t.same((await server.get('/dbs')).body.dbs, ['app.db'], 'GET /dbs lists app.db only');
  t.not((await server.get('/tables?db=_sqlscribe_pilots')).status, 200, '/tables cannot reach it');
  t.same(await listIds(server, ''), { total: 1, ids: [1] });
});

t.test('refuses to change or delete a record', async (t) => {
  const { server } = await serve(t);
  const stored = await created(server, pilot());
  for (const method of ['PUT', 'PATCH', 'DELETE']) {
    for (const p of [`/pilots/${String(stored.id)}`, '/pilots']) {
      assertError(
        t,
        await server.request(method, p, { body: pilot({ decision: 'retirar' }) }),
        405,
        1013,
        `${method} ${p}`,
      );
    }
  }
  const reply = await server.get(`/pilots/${String(stored.id)}`);
  t.same(reply.body, { ok: true, id: stored.id, created: stored.created, pilot: pilot() }, 'unchanged');
  t.equal((await server.get('/pilots')).body.total, 1, 'still one');
});
