/**
 * The classroom pilot record, as a JSON Schema (draft
 * 2020-12). No other top-level properties; `scope` may carry more than its
 * four required fields; `aggregate_evidence` holds exactly its four counts.
 */

export const DECISIONS = ['conservar', 'corregir', 'volver_a_pilotar', 'retirar'] as const;
export type Decision = (typeof DECISIONS)[number];

export const EVIDENCE_LEVELS = ['aun_no_observable', 'en_desarrollo', 'logrado', 'profundizado'] as const;
export type EvidenceLevel = (typeof EVIDENCE_LEVELS)[number];

export interface PilotRecord {
  date: string;
  responsible_role: string;
  scope: { level: string; subject: string; objective: string; class_codes: string[]; [other: string]: unknown };
  commit: string;
  planned_minutes: number;
  actual_minutes: number;
  aggregate_evidence: Record<EvidenceLevel, number>;
  incidents: string[];
  decision: Decision;
  notes_without_personal_data?: string;
}

const count = { type: 'integer', minimum: 0 } as const;

export const pilotSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://sqlscribe.example/schemas/pilot-record.json',
  title: 'Classroom pilot record',
  type: 'object',
  additionalProperties: false,
  required: [
    'date',
    'responsible_role',
    'scope',
    'commit',
    'planned_minutes',
    'actual_minutes',
    'aggregate_evidence',
    'incidents',
    'decision',
  ],
  properties: {
    date: { type: 'string', format: 'date', description: 'Calendar date, YYYY-MM-DD' },
    responsible_role: { type: 'string', minLength: 2 },
    scope: {
      type: 'object',
      required: ['level', 'subject', 'objective', 'class_codes'],
      properties: {
        level: { type: 'string' },
        subject: { type: 'string' },
        objective: { type: 'string' },
        class_codes: { type: 'array', minItems: 1, items: { type: 'string' } },
      },
    },
    commit: {
      type: 'string',
      pattern: '^[0-9a-f]{7,40}$',
      description: 'The software commit piloted: 7 to 40 lowercase hexadecimal characters',
    },
    planned_minutes: { type: 'integer', minimum: 1 },
    actual_minutes: { type: 'integer', minimum: 1 },
    aggregate_evidence: {
      type: 'object',
      additionalProperties: false,
      required: [...EVIDENCE_LEVELS],
      properties: Object.fromEntries(EVIDENCE_LEVELS.map((level) => [level, count])),
    },
    incidents: { type: 'array', items: { type: 'string' } },
    decision: { enum: [...DECISIONS] },
    notes_without_personal_data: { type: 'string', description: 'Free text that must contain no personal data' },
  },
} as const;
