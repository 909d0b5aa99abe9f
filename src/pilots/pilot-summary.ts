/**
 * GET /pilots/summary: what a set of pilot records says, computed from the
 * records themselves: counts by decision, evidence totals and
 * shares by evidence level (overall and per school level), planned against
 * actual minutes, and each scope's current decision; optionally grouped by
 * commit or by subject.
 */
import { DECISIONS, EVIDENCE_LEVELS, type Decision, type EvidenceLevel } from './pilot-schema';
import type { StoredPilot } from './pilot-store';

export type SummaryGrouping = 'commit' | 'subject';

interface Evidence {
  totals: Record<EvidenceLevel, number>;
  /** Each level's part of all evidence, 0 to 1 (0 when there is none). */
  shares: Record<EvidenceLevel, number>;
}

interface Figures {
  count: number;
  by_decision: Record<Decision, number>;
  evidence: Evidence & { by_level: Record<string, Evidence> };
  minutes: { planned: number; actual: number; overrun: number; overrun_share: number };
}

interface ScopeState {
  level: string;
  subject: string;
  objective: string;
  current_decision: Decision;
  last_pilot: number;
  last_commit: string;
  last_date: string;
  pilots: number;
}

export interface PilotSummary extends Figures {
  scopes: ScopeState[];
  groups?: Array<{ key: string } & Figures>;
}

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function evidenceOf(pilots: readonly StoredPilot[]): Evidence {
  const totals = zeroes(EVIDENCE_LEVELS);
  for (const { pilot } of pilots) for (const level of EVIDENCE_LEVELS) totals[level] += pilot.aggregate_evidence[level];
  const all = EVIDENCE_LEVELS.reduce((sum, level) => sum + totals[level], 0);
  const shares = Object.fromEntries(
    EVIDENCE_LEVELS.map((level) => [level, all === 0 ? 0 : round(totals[level] / all)]),
  ) as Record<EvidenceLevel, number>;
  return { totals, shares };
}

function groupBy(pilots: readonly StoredPilot[], key: (pilot: StoredPilot) => string): Map<string, StoredPilot[]> {
  const groups = new Map<string, StoredPilot[]>();
  for (const pilot of pilots) groups.set(key(pilot), [...(groups.get(key(pilot)) ?? []), pilot]);
  return groups;
}

function figuresOf(pilots: readonly StoredPilot[]): Figures {
  const byDecision = zeroes(DECISIONS);
  for (const { pilot } of pilots) byDecision[pilot.decision]++;
  const planned = pilots.reduce((sum, { pilot }) => sum + pilot.planned_minutes, 0);
  const actual = pilots.reduce((sum, { pilot }) => sum + pilot.actual_minutes, 0);
  const byLevel = Object.fromEntries(
    [...groupBy(pilots, ({ pilot }) => pilot.scope.level)].map(([level, group]) => [level, evidenceOf(group)]),
  );
  return {
    count: pilots.length,
    by_decision: byDecision,
    evidence: { ...evidenceOf(pilots), by_level: byLevel },
    minutes: {
      planned,
      actual,
      overrun: actual - planned,
      overrun_share: planned === 0 ? 0 : round((actual - planned) / planned),
    },
  };
}

function scopesOf(pilots: readonly StoredPilot[]): ScopeState[] {
  const scopes = groupBy(pilots, ({ pilot }) =>
    JSON.stringify([pilot.scope.level, pilot.scope.subject, pilot.scope.objective]),
  );
  return [...scopes.values()].map((group) => {
    const last = group[group.length - 1] as StoredPilot;
    const { level, subject, objective } = last.pilot.scope;
    return {
      level,
      subject,
      objective,
      current_decision: last.pilot.decision,
      last_pilot: last.id,
      last_commit: last.pilot.commit,
      last_date: last.pilot.date,
      pilots: group.length,
    };
  });
}

/** `pilots` in id order. */
export function summarize(pilots: readonly StoredPilot[], grouping?: SummaryGrouping): PilotSummary {
  const summary: PilotSummary = { ...figuresOf(pilots), scopes: scopesOf(pilots) };
  if (grouping === undefined) return summary;
  const key =
    grouping === 'commit' ? ({ pilot }: StoredPilot) => pilot.commit : ({ pilot }: StoredPilot) => pilot.scope.subject;
  summary.groups = [...groupBy(pilots, key)].map(([value, group]) => ({ key: value, ...figuresOf(group) }));
  return summary;
}
