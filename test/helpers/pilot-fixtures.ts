/**
 * A known set of six pilot records (four scopes, three commits, two subjects,
 * two school levels, a valid sequence per scope) and the summary figures it
 * must give: shared by the unit tests of the summary and the HTTP tests.
 */

export type Evidence = [number, number, number, number];
export type Decision = 'conservar' | 'corregir' | 'volver_a_pilotar' | 'retirar';

/** date, level, subject, objective, commit, planned and actual minutes, evidence, decision — ids 1 to 6 in this order. */
export const KNOWN_SET: ReadonlyArray<[string, string, string, string, string, number, number, Evidence, Decision]> = [
  ['2026-11-02', '8B', 'matematica', 'OA 3', 'a1b2c3d', 45, 50, [2, 10, 15, 3], 'corregir'],
  ['2026-11-09', '8B', 'matematica', 'OA 3', 'b2c3d4e', 45, 45, [1, 5, 20, 4], 'conservar'],
  ['2026-11-10', '1M', 'lenguaje', 'OA 7', 'a1b2c3d', 90, 80, [0, 0, 0, 0], 'volver_a_pilotar'],
  ['2026-11-12', '1M', 'matematica', 'OA 1', 'b2c3d4e', 60, 75, [5, 5, 5, 5], 'retirar'],
  ['2026-11-16', '8B', 'lenguaje', 'OA 7', 'c3d4e5f', 40, 40, [0, 5, 10, 5], 'conservar'],
  ['2026-11-20', '8B', 'matematica', 'OA 3', 'c3d4e5f', 45, 30, [0, 0, 0, 0], 'corregir'],
];

export function evidence(totals: Evidence): { totals: Record<string, number>; shares: Record<string, number> } {
  const all = totals.reduce((a, b) => a + b, 0);
  const keys = ['aun_no_observable', 'en_desarrollo', 'logrado', 'profundizado'];
  return {
    totals: Object.fromEntries(keys.map((k, i) => [k, totals[i] as number])),
    shares: Object.fromEntries(keys.map((k, i) => [k, all === 0 ? 0 : (totals[i] as number) / all])),
  };
}

/** Compares figures: integers exactly, fractions (shares) to within 1e-4. */
export const byDecision = (
  conservar: number,
  corregir: number,
  volver_a_pilotar: number,
  retirar: number,
): Record<string, number> => ({ conservar, corregir, volver_a_pilotar, retirar });

export const EXPECTED = {
  count: 6,
  by_decision: byDecision(2, 2, 1, 1),
  evidence: {
    ...evidence([8, 25, 50, 17]),
    by_level: { '8B': evidence([3, 20, 45, 12]), '1M': evidence([5, 5, 5, 5]) },
  },
  minutes: { planned: 325, actual: 320, overrun: -5, overrun_share: -5 / 325 },
  scopes: [
    {
      level: '8B',
      subject: 'matematica',
      objective: 'OA 3',
      current_decision: 'corregir',
      last_pilot: 6,
      last_commit: 'c3d4e5f',
      last_date: '2026-11-20',
      pilots: 3,
    },
    {
      level: '1M',
      subject: 'lenguaje',
      objective: 'OA 7',
      current_decision: 'volver_a_pilotar',
      last_pilot: 3,
      last_commit: 'a1b2c3d',
      last_date: '2026-11-10',
      pilots: 1,
    },
    {
      level: '1M',
      subject: 'matematica',
      objective: 'OA 1',
      current_decision: 'retirar',
      last_pilot: 4,
      last_commit: 'b2c3d4e',
      last_date: '2026-11-12',
      pilots: 1,
    },
    {
      level: '8B',
      subject: 'lenguaje',
      objective: 'OA 7',
      current_decision: 'conservar',
      last_pilot: 5,
      last_commit: 'c3d4e5f',
      last_date: '2026-11-16',
      pilots: 1,
    },
  ],
};

export const BY_COMMIT = [
  {
    key: 'a1b2c3d',
    count: 2,
    by_decision: byDecision(0, 1, 1, 0),
    evidence: {
      ...evidence([2, 10, 15, 3]),
      by_level: { '8B': evidence([2, 10, 15, 3]), '1M': evidence([0, 0, 0, 0]) },
    },
    minutes: { planned: 135, actual: 130, overrun: -5, overrun_share: -5 / 135 },
  },
  {
    key: 'b2c3d4e',
    count: 2,
    by_decision: byDecision(1, 0, 0, 1),
    evidence: {
      ...evidence([6, 10, 25, 9]),
      by_level: { '8B': evidence([1, 5, 20, 4]), '1M': evidence([5, 5, 5, 5]) },
    },
    minutes: { planned: 105, actual: 120, overrun: 15, overrun_share: 15 / 105 },
  },
  {
    key: 'c3d4e5f',
    count: 2,
    by_decision: byDecision(1, 1, 0, 0),
    evidence: { ...evidence([0, 5, 10, 5]), by_level: { '8B': evidence([0, 5, 10, 5]) } },
    minutes: { planned: 85, actual: 70, overrun: -15, overrun_share: -15 / 85 },
  },
];

export const BY_SUBJECT = [
  {
    key: 'matematica',
    count: 4,
    by_decision: byDecision(1, 2, 0, 1),
    evidence: {
      ...evidence([8, 20, 40, 12]),
      by_level: { '8B': evidence([3, 15, 35, 7]), '1M': evidence([5, 5, 5, 5]) },
    },
    minutes: { planned: 195, actual: 200, overrun: 5, overrun_share: 5 / 195 },
  },
  {
    key: 'lenguaje',
    count: 2,
    by_decision: byDecision(1, 0, 1, 0),
    evidence: { ...evidence([0, 5, 10, 5]), by_level: { '1M': evidence([0, 0, 0, 0]), '8B': evidence([0, 5, 10, 5]) } },
    minutes: { planned: 130, actual: 120, overrun: -10, overrun_share: -10 / 130 },
  },
];

/** A record that breaks fifteen rules at once, one of each kind the schema states. */
export const INVALID_RECORD = {
  date: '2026-02-30',
  responsible_role: 'x',
  scope: { level: '8B', subject: 'matematica', class_codes: [] },
  commit: 'ABC',
  planned_minutes: 0,
  actual_minutes: 1.5,
  aggregate_evidence: { aun_no_observable: -1, en_desarrollo: 2.5, logrado: 1, extra: 1 },
  incidents: ['ok', 7],
  decision: 'seguir',
  notes_without_personal_data: 3,
  student: 'x',
};
