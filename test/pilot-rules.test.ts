/**
 * The rules of classroom pilot records, without a server:
 *
 * - validatePilot: the JSON Schema, every violation at once, each at the JSON
 *   Pointer of the offending value;
 * - findPersonalData: e-mail addresses, phone numbers and national identity
 *   numbers found by kind, and no false alarm on ordinary classroom text;
 * - summarize: the figures of GET /pilots/summary on a known set.
 */
import t, { type Test } from 'tap';
import { findPersonalData } from '../src/pilots/personal-data';
import { DECISIONS, EVIDENCE_LEVELS, pilotSchema, type PilotRecord } from '../src/pilots/pilot-schema';
import type { StoredPilot } from '../src/pilots/pilot-store';
import { summarize } from '../src/pilots/pilot-summary';
import { validatePilot } from '../src/pilots/pilot-validation';
import {
  BY_COMMIT,
  BY_SUBJECT,
  EXPECTED,
  INVALID_RECORD,
  KNOWN_SET,
  byDecision,
  evidence,
  type Evidence,
} from './helpers/pilot-fixtures';

// ── fixtures ─────────────────────────────────────────────────────────────────

/** A complete, valid record: every field, the optional notes included. */
function full(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    date: '2026-11-20',
    responsible_role: 'docente de aula',
    scope: { level: '8B', subject: 'matematica', objective: 'OA 3', class_codes: ['8B-1', '8B-2'] },
    commit: 'a1b2c3d',
    planned_minutes: 45,
    actual_minutes: 50,
    aggregate_evidence: { aun_no_observable: 2, en_desarrollo: 10, logrado: 15, profundizado: 3 },
    incidents: ['el proyector falló 10 minutos'],
    decision: 'conservar',
    notes_without_personal_data: 'el grupo trabajó en parejas',
    ...overrides,
  };
}

/** `full()` with one field changed (or removed, with `undefined`) at a path of property names. */
function withField(path: string[], value: unknown): Record<string, unknown> {
  const record = structuredClone(full());
  let node: Record<string, unknown> = record;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return record;
}

function pathsOf(record: unknown): string[] {
  const result = validatePilot(record);
  return result.ok ? [] : result.violations.map((v) => v.path).sort();
}

/** Asserts that the record is refused with exactly these violation paths (each once), every one with a message. */
function refusedAt(t: Test, record: unknown, paths: string[], what: string): void {
  const result = validatePilot(record);
  t.equal(result.ok, false, `${what}: refused`);
  if (result.ok) return;
  t.same(result.violations.map((v) => v.path).sort(), [...paths].sort(), `${what}: violations at ${paths.join(', ')}`);
  for (const v of result.violations)
    t.ok(typeof v.message === 'string' && v.message.length > 0, `${what}: ${v.path} has a message`);
}

// ── validatePilot ────────────────────────────────────────────────────────────

t.test('accepts a full record of every decision', async (t) => {
  for (const decision of ['conservar', 'corregir', 'volver_a_pilotar', 'retirar']) {
    const result = validatePilot(full({ decision }));
    t.equal(result.ok, true, `${decision} accepted`);
    if (result.ok) t.equal(result.record.decision, decision);
  }
  t.same([...DECISIONS].sort(), ['conservar', 'corregir', 'retirar', 'volver_a_pilotar'], 'exactly the four decisions');
});

t.test('accepts a record without the optional notes, with no incidents and zero evidence', async (t) => {
  const record = full({
    incidents: [],
    aggregate_evidence: { aun_no_observable: 0, en_desarrollo: 0, logrado: 0, profundizado: 0 },
  });
  delete record.notes_without_personal_data;
  t.same(pathsOf(record), []);
  t.same(pathsOf(full({ notes_without_personal_data: '' })), [], 'empty notes');
});

t.test('accepts the bounds of each constraint', async (t) => {
  t.same(pathsOf(full({ responsible_role: 'UT' })), [], 'responsible_role of 2 characters');
  t.same(pathsOf(full({ commit: '0123456' })), [], 'commit of 7 characters');
  t.same(pathsOf(full({ commit: '0123456789abcdef0123456789abcdef01234567' })), [], 'commit of 40 characters');
  t.same(pathsOf(full({ planned_minutes: 1, actual_minutes: 1 })), [], 'minutes of 1');
  t.same(pathsOf(full({ date: '2028-02-29' })), [], 'a leap day');
  t.same(pathsOf(withField(['scope', 'class_codes'], ['8B'])), [], 'one class code');
});

t.test('accepts other properties in scope', async (t) => {
  t.same(pathsOf(withField(['scope', 'room'], 'sala 12')), []);
  t.same(pathsOf(withField(['scope', 'teachers'], 2)), [], 'of any type');
});

t.test('refuses a missing required field at its path', async (t) => {
  for (const field of [
    'date',
    'responsible_role',
    'scope',
    'commit',
    'planned_minutes',
    'actual_minutes',
    'aggregate_evidence',
    'incidents',
    'decision',
  ]) {
    refusedAt(t, withField([field], undefined), [`/${field}`], `without ${field}`);
  }
  for (const field of ['level', 'subject', 'objective', 'class_codes']) {
    refusedAt(t, withField(['scope', field], undefined), [`/scope/${field}`], `without scope.${field}`);
  }
  for (const field of EVIDENCE_LEVELS) {
    refusedAt(
      t,
      withField(['aggregate_evidence', field], undefined),
      [`/aggregate_evidence/${field}`],
      `without aggregate_evidence.${field}`,
    );
  }
});

t.test('refuses an extra top-level property', async (t) => {
  refusedAt(t, full({ student_name: 'x' }), ['/student_name'], 'student_name');
  refusedAt(t, full({ notes: 'x' }), ['/notes'], 'notes (not the notes_without_personal_data field)');
});

t.test('refuses an extra property in aggregate_evidence', async (t) => {
  refusedAt(t, withField(['aggregate_evidence', 'destacado'], 1), ['/aggregate_evidence/destacado'], 'destacado');
});

t.test('refuses a date that is not a calendar date', async (t) => {
  for (const date of ['2026-02-30', '20261120', '2026-13-01', '2026-11-20T10:30:00Z', '20-11-2026', '']) {
    refusedAt(t, full({ date }), ['/date'], JSON.stringify(date));
  }
  refusedAt(t, full({ date: 20261120 }), ['/date'], 'a number');
});

t.test('refuses a responsible_role shorter than 2 characters', async (t) => {
  refusedAt(t, full({ responsible_role: 'x' }), ['/responsible_role'], 'length 1');
  refusedAt(t, full({ responsible_role: '' }), ['/responsible_role'], 'empty');
});

t.test('refuses empty or ill-typed class_codes', async (t) => {
  refusedAt(t, withField(['scope', 'class_codes'], []), ['/scope/class_codes'], 'empty');
  refusedAt(t, withField(['scope', 'class_codes'], '8B'), ['/scope/class_codes'], 'a string');
  refusedAt(t, withField(['scope', 'class_codes'], ['8B', 8]), ['/scope/class_codes/1'], 'a number item');
  refusedAt(t, full({ scope: '8B' }), ['/scope'], 'scope not an object');
  refusedAt(t, withField(['scope', 'level'], 8), ['/scope/level'], 'level not a string');
});

t.test('refuses a commit outside the pattern', async (t) => {
  for (const commit of [
    'A1B2C3D',
    'a1b2c3',
    '0123456789abcdef0123456789abcdef012345678',
    'a1b2c3g',
    'a1b2 c3d',
    ' a1b2c3d',
  ]) {
    refusedAt(t, full({ commit }), ['/commit'], JSON.stringify(commit));
  }
  refusedAt(t, full({ commit: 1234567 }), ['/commit'], 'a number');
});

t.test('refuses minutes that are not whole numbers of at least 1', async (t) => {
  for (const field of ['planned_minutes', 'actual_minutes']) {
    for (const value of [0, -5, 1.5, '45', null])
      refusedAt(t, full({ [field]: value }), [`/${field}`], `${field} ${JSON.stringify(value)}`);
  }
});

t.test('refuses evidence counts that are negative or not whole numbers', async (t) => {
  for (const level of EVIDENCE_LEVELS) {
    for (const value of [-1, 2.5, '3'])
      refusedAt(
        t,
        withField(['aggregate_evidence', level], value),
        [`/aggregate_evidence/${level}`],
        `${level} ${JSON.stringify(value)}`,
      );
  }
  refusedAt(t, full({ aggregate_evidence: [1, 2, 3, 4] }), ['/aggregate_evidence'], 'an array');
});

t.test('refuses incidents that are not an array of strings', async (t) => {
  refusedAt(t, full({ incidents: 'ninguno' }), ['/incidents'], 'a string');
  refusedAt(t, full({ incidents: null }), ['/incidents'], 'null');
  refusedAt(t, full({ incidents: ['ok', 3] }), ['/incidents/1'], 'a number item');
  refusedAt(t, full({ incidents: ['ok', 'ok', { a: 1 }] }), ['/incidents/2'], 'an object item');
});

t.test('refuses a decision outside the enum', async (t) => {
  for (const decision of ['seguir', 'Conservar', 'volver a pilotar', '', 1])
    refusedAt(t, full({ decision }), ['/decision'], JSON.stringify(decision));
});

t.test('refuses notes that are not a string', async (t) => {
  refusedAt(t, full({ notes_without_personal_data: 5 }), ['/notes_without_personal_data'], 'a number');
  refusedAt(t, full({ notes_without_personal_data: ['a'] }), ['/notes_without_personal_data'], 'an array');
  refusedAt(t, full({ notes_without_personal_data: null }), ['/notes_without_personal_data'], 'null');
});

t.test('refuses a record that is not an object, at the root', async (t) => {
  for (const record of [[], 'pilot', 42, null]) refusedAt(t, record, ['/'], JSON.stringify(record));
});

t.test('reports every violation at once', async (t) => {
  const record = INVALID_RECORD;
  refusedAt(
    t,
    record,
    [
      '/student',
      '/date',
      '/responsible_role',
      '/scope/objective',
      '/scope/class_codes',
      '/commit',
      '/planned_minutes',
      '/actual_minutes',
      '/aggregate_evidence/aun_no_observable',
      '/aggregate_evidence/en_desarrollo',
      '/aggregate_evidence/profundizado',
      '/aggregate_evidence/extra',
      '/incidents/1',
      '/decision',
      '/notes_without_personal_data',
    ],
    'fifteen problems',
  );
  refusedAt(
    t,
    {},
    [
      '/date',
      '/responsible_role',
      '/scope',
      '/commit',
      '/planned_minutes',
      '/actual_minutes',
      '/aggregate_evidence',
      '/incidents',
      '/decision',
    ],
    'an empty object',
  );
});

t.test('publishes a draft 2020-12 schema closed at the top and in aggregate_evidence only', async (t) => {
  t.equal(pilotSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  t.equal(pilotSchema.additionalProperties, false);
  t.equal(pilotSchema.properties.aggregate_evidence.additionalProperties, false);
  t.notOk('additionalProperties' in pilotSchema.properties.scope, 'scope is open');
  t.same([...pilotSchema.required].sort(), [
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
});

// ── findPersonalData ─────────────────────────────────────────────────────────

const EMAIL = 'e-mail address';
const PHONE = 'phone number';
const NATIONAL_ID = 'national identity number';

t.test('finds e-mail addresses', async (t) => {
  for (const text of [
    'profe@colegio.cl',
    'escribir a ana.perez+8b@mail.colegio.cl mañana',
    'Contacto: J_Soto@Example.COM.',
  ]) {
    t.same(findPersonalData([text]), [EMAIL], text);
  }
});

t.test('finds phone numbers', async (t) => {
  for (const text of [
    '+56 9 1234 5678',
    'llamar al 912345678',
    'fono (02) 2345 6789',
    '+56912345678',
    '9 1234 5678',
    'tel. +34 612-345-678',
    'fono +1 234 5678',
  ]) {
    t.same(findPersonalData([text]), [PHONE], text);
  }
});

t.test('finds national identity numbers, each as such and not as a phone', async (t) => {
  for (const text of [
    'RUT 12.345.678-9',
    'rut 12345678-K',
    'rut 12345678-k',
    'RUT 1.234.567-8',
    'DNI 12345678Z',
    'DNI 12.345.678',
    'NIE X1234567L',
  ]) {
    t.same(findPersonalData([text]), [NATIONAL_ID], text);
  }
});

t.test('finds every kind in every text, in a fixed order', async (t) => {
  t.same(findPersonalData(['rut 12.345.678-9', 'ok', 'a@b.cl', '+56 9 1234 5678']), [EMAIL, PHONE, NATIONAL_ID]);
  t.same(findPersonalData(['sin datos', 'tampoco', 'profe@colegio.cl']), [EMAIL], 'in the last text');
  t.same(findPersonalData(['+56 9 1234 5678 o profe@colegio.cl']), [EMAIL, PHONE], 'two kinds in one text');
});

t.test('finds nothing in ordinary classroom text', async (t) => {
  const ordinary = [
    '',
    '2026-11-20',
    '45 minutos',
    'OA 3',
    'grupo 8B',
    'commit a1b2c3d',
    '10:30',
    '7/10',
    '3.5 de 7.0',
    '30 de 32 estudiantes presentes',
    'cursos 8A, 8B y 8C; sala 12',
    'del 2026-11-20 al 2026-11-27',
    'bloque de 10:30 a 11:15',
    'El 2026-11-20 de 10:30 a 11:15 (45 minutos) el grupo 8B trabajó el OA 3 con el commit a1b2c3d; puntajes 7/10 y 3.5 de 7.0.',
  ];
  for (const text of ordinary) t.same(findPersonalData([text]), [], JSON.stringify(text));
  t.same(findPersonalData(ordinary), [], 'all of them together');
  t.same(findPersonalData([]), [], 'no text at all');
});

t.test('finds nothing in a date next to a time or a count, nor in a commit', async (t) => {
  for (const text of [
    'sesión 2026-11-20 10:30',
    'sesión 2026-11-20 (45 minutos)',
    'commit 0123456789abcdef0123456789abcdef01234567',
    'commit 1234567890abcde',
  ]) {
    t.same(findPersonalData([text]), [], JSON.stringify(text));
  }
});

t.test('still finds a phone beside a date, a time or a commit', async (t) => {
  t.same(findPersonalData(['2026-11-20 10:30 llamar al 912345678']), [PHONE]);
  t.same(findPersonalData(['commit a1b2c3d, fono +56 9 1234 5678']), [PHONE]);
  t.same(findPersonalData(['2026-11-20: +56 9 1234 5678']), [PHONE]);
});

// ── summarize ────────────────────────────────────────────────────────────────

function stored(
  id: number,
  date: string,
  level: string,
  subject: string,
  objective: string,
  commit: string,
  planned: number,
  actual: number,
  evidence: Evidence,
  decision: PilotRecord['decision'],
): StoredPilot {
  const [aun_no_observable, en_desarrollo, logrado, profundizado] = evidence;
  return {
    id,
    created: `2026-11-21T00:00:0${id}.000Z`,
    pilot: {
      date,
      responsible_role: 'docente',
      scope: { level, subject, objective, class_codes: [`${level}-1`] },
      commit,
      planned_minutes: planned,
      actual_minutes: actual,
      aggregate_evidence: { aun_no_observable, en_desarrollo, logrado, profundizado },
      incidents: [],
      decision,
    },
  };
}

const KNOWN: StoredPilot[] = KNOWN_SET.map(
  ([date, level, subject, objective, commit, planned, actual, counts, decision], i) =>
    stored(i + 1, date, level, subject, objective, commit, planned, actual, counts, decision),
);

function sameFigures(t: Test, actual: unknown, expected: unknown, where: string): void {
  if (typeof expected === 'number') {
    if (Number.isInteger(expected) && !where.includes('share')) t.equal(actual, expected, where);
    else
      t.ok(
        typeof actual === 'number' && Math.abs(actual - expected) <= 1e-4,
        `${where}: ${String(actual)} ≈ ${expected}`,
      );
    return;
  }
  if (Array.isArray(expected)) {
    t.ok(Array.isArray(actual) && actual.length === expected.length, `${where}: ${expected.length} items`);
    expected.forEach((item, i) => sameFigures(t, (actual as unknown[] | undefined)?.[i], item, `${where}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    const object = (actual ?? {}) as Record<string, unknown>;
    t.same(Object.keys(object).sort(), Object.keys(expected).sort(), `${where}: keys`);
    for (const [key, value] of Object.entries(expected)) sameFigures(t, object[key], value, `${where}.${key}`);
    return;
  }
  t.equal(actual, expected, where);
}

t.test('summarizes counts, evidence, minutes and scopes of a known set', async (t) => {
  const summary = summarize(KNOWN);
  sameFigures(t, summary, EXPECTED, 'summary');
  t.equal(summary.evidence.shares.logrado, 0.5, 'logrado is half of all evidence');
  t.equal(summary.evidence.shares.profundizado, 0.17);
});

t.test('groups the figures by commit', async (t) => {
  const summary = summarize(KNOWN, 'commit');
  sameFigures(t, summary, { ...EXPECTED, groups: BY_COMMIT }, 'by commit');
});

t.test('groups the figures by subject', async (t) => {
  const summary = summarize(KNOWN, 'subject');
  sameFigures(t, summary, { ...EXPECTED, groups: BY_SUBJECT }, 'by subject');
});

t.test('summarizes no pilots as zeroes', async (t) => {
  sameFigures(
    t,
    summarize([]),
    {
      count: 0,
      by_decision: byDecision(0, 0, 0, 0),
      evidence: { ...evidence([0, 0, 0, 0]), by_level: {} },
      minutes: { planned: 0, actual: 0, overrun: 0, overrun_share: 0 },
      scopes: [],
    },
    'empty',
  );
  t.same(summarize([], 'commit').groups, [], 'no groups');
});

t.test('takes the latest pilot of a scope as its current decision', async (t) => {
  const [first, second] = [KNOWN[0], KNOWN[1]] as [StoredPilot, StoredPilot];
  t.same(
    summarize([first]).scopes.map((s) => s.current_decision),
    ['corregir'],
  );
  t.same(
    summarize([first, second]).scopes.map((s) => [s.current_decision, s.last_pilot, s.pilots]),
    [['conservar', 2, 2]],
  );
});
