/**
 * The pilot record's evidence from a lesson: each student placed at one of
 * the four levels by how many of the set's exercises they solved, against
 * thresholds the teacher gives (a count of exercises, or a share such as
 * `50%`). By default: none solved, aún no observable; fewer than half, en
 * desarrollo; at least half, logrado; all, profundizado. The counts go into
 * a pilot record's `aggregate_evidence` as they are.
 */
import { EngineError } from '../errors';
import { EVIDENCE_LEVELS, type EvidenceLevel } from '../pilots/pilot-schema';

/** The fewest exercises solved for each level above the first. */
export interface EvidenceThresholds {
  readonly en_desarrollo: number;
  readonly logrado: number;
  readonly profundizado: number;
}

export const THRESHOLD_NAMES = ['en_desarrollo', 'logrado', 'profundizado'] as const;

export function defaultThresholds(exercises: number): EvidenceThresholds {
  return { en_desarrollo: 1, logrado: Math.ceil(exercises / 2), profundizado: exercises };
}

/** `2` (exercises) or `50%` (of the set, rounded up); undefined keeps the default. */
export function readThresholds(
  raw: Readonly<Record<(typeof THRESHOLD_NAMES)[number], string | undefined>>,
  exercises: number,
): EvidenceThresholds {
  const thresholds: Record<string, number> = { ...defaultThresholds(exercises) };
  for (const name of THRESHOLD_NAMES) {
    const value = raw[name];
    if (value === undefined) continue;
    const percent = /^(\d{1,3}(?:\.\d+)?)%$/.exec(value);
    if (percent !== null && Number(percent[1]) <= 100)
      thresholds[name] = Math.ceil((exercises * Number(percent[1])) / 100);
    else if (/^\d{1,6}$/.test(value) && Number(value) <= exercises) thresholds[name] = Number(value);
    else
      throw new EngineError('INVALID_QUERY_PARAMETER', {
        name,
        detail: `expected a number of exercises from 0 to ${exercises}, or a share such as 50%`,
      });
  }
  const result = thresholds as unknown as EvidenceThresholds;
  if (!(result.en_desarrollo <= result.logrado && result.logrado <= result.profundizado)) {
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name: 'logrado',
      detail: `the thresholds must not decrease: en_desarrollo ${result.en_desarrollo}, logrado ${result.logrado}, profundizado ${result.profundizado}`,
    });
  }
  return result;
}

export function levelOf(solved: number, thresholds: EvidenceThresholds): EvidenceLevel {
  if (solved >= thresholds.profundizado) return 'profundizado';
  if (solved >= thresholds.logrado) return 'logrado';
  if (solved >= thresholds.en_desarrollo) return 'en_desarrollo';
  return 'aun_no_observable';
}

/** Students per level, every level present (the pilot record requires all four). */
export function evidenceCounts(
  solvedCounts: readonly number[],
  thresholds: EvidenceThresholds,
): Record<EvidenceLevel, number> {
  const counts = Object.fromEntries(EVIDENCE_LEVELS.map((level) => [level, 0])) as Record<EvidenceLevel, number>;
  for (const solved of solvedCounts) counts[levelOf(solved, thresholds)]++;
  return counts;
}
