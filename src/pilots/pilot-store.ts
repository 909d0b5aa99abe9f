/**
 * Pilot records live in a database of the service's own, beside the user's
 * databases, and every change to it goes through the same journaled batches
 * as any other: replay restores the records with everything else. Records are
 * immutable evidence: they are only ever inserted.
 */
import type { Principal } from '../access/principal';
import type { BatchRunner } from '../services/writes/batch-runner';
import type { DatabaseLifecycle } from '../services/databases/database-lifecycle';
import { SYSTEM_PREFIX } from '../database-names';
import type { DatabaseDirectory, DatabaseRef } from '../services/databases/database-directory';
import type { StatementKind } from '../engine/dialect/statement';
import type { ExecStatement, ResultValue, SqlValue } from '../engine/protocol';
import { EngineError } from '../errors';
import type { PilotRecord } from './pilot-schema';

export const PILOTS_DATABASE = `${SYSTEM_PREFIX}_pilots.db`;

const CREATE_TABLE = `CREATE TABLE pilots (
  id INTEGER PRIMARY KEY,
  created TEXT NOT NULL,
  date TEXT NOT NULL,
  level TEXT NOT NULL,
  subject TEXT NOT NULL,
  objective TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  decision TEXT NOT NULL,
  record TEXT NOT NULL
)`;

export interface StoredPilot {
  id: number;
  created: string;
  pilot: PilotRecord;
}

export interface PilotFilter {
  decision?: string;
  commit?: string;
  subject?: string;
  level?: string;
  from?: string;
  to?: string;
}

const FILTER_COLUMNS: ReadonlyArray<[keyof PilotFilter, string]> = [
  ['decision', 'decision = ?'],
  ['commit', 'commit_sha = ?'],
  ['subject', 'subject = ?'],
  ['level', 'level = ?'],
  ['from', 'date >= ?'],
  ['to', 'date <= ?'],
];

function statement(sql: string, kind: StatementKind, params?: SqlValue[]): ExecStatement {
  return params === undefined ? { sql, kind } : { sql, kind, params };
}

function toStored(row: ResultValue[]): StoredPilot {
  const [id, created, record] = row;
  return { id: Number(id), created: String(created), pilot: JSON.parse(String(record)) as PilotRecord };
}

export class PilotStore {
  private ready: Promise<void> | undefined;
  private readonly ref: DatabaseRef;

  constructor(
    directory: DatabaseDirectory,
    private readonly batches: BatchRunner,
    private readonly lifecycle: DatabaseLifecycle,
  ) {
    this.ref = directory.refOf(PILOTS_DATABASE);
  }

  /** The database and its table, made on first use (and journaled like any other). */
  private ensure(): Promise<void> {
    this.ready ??= (async () => {
      await this.lifecycle.create(PILOTS_DATABASE, true, null);
      const [exists] = await this.read(statement("SELECT count(*) FROM sqlite_schema WHERE name = 'pilots'", 'select'));
      if (Number(exists?.[0]) === 0) await this.batches.run(this.ref, [statement(CREATE_TABLE, 'create-table')], false);
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async read(query: ExecStatement): Promise<ResultValue[][]> {
    const [result] = await this.batches.run(this.ref, [query], true);
    return result?.rows ?? [];
  }

  async insert(pilot: PilotRecord, by?: Principal): Promise<StoredPilot> {
    await this.ensure();
    const { level, subject, objective } = pilot.scope;
    const params: SqlValue[] = [
      pilot.date,
      level,
      subject,
      objective,
      pilot.commit,
      pilot.decision,
      JSON.stringify(pilot),
    ];
    const insert = statement(
      "INSERT INTO pilots (created, date, level, subject, objective, commit_sha, decision, record) VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?, ?, ?, ?, ?, ?, ?) RETURNING id, created, record",
      'insert',
      params,
    );
    const [result] = await this.batches.run(
      this.ref,
      [insert],
      false,
      by === undefined ? {} : { call: { principal: by } },
    );
    const row = result?.rows[0];
    if (row === undefined) throw new EngineError('INTERNAL');
    return toStored(row);
  }

  /** The last pilot of a scope (same level, subject and objective), if any. */
  async latestOfScope(scope: PilotRecord['scope']): Promise<StoredPilot | undefined> {
    await this.ensure();
    const rows = await this.read(
      statement(
        'SELECT id, created, record FROM pilots WHERE level = ? AND subject = ? AND objective = ? ORDER BY id DESC LIMIT 1',
        'select',
        [scope.level, scope.subject, scope.objective],
      ),
    );
    return rows[0] === undefined ? undefined : toStored(rows[0]);
  }

  async get(id: number): Promise<StoredPilot | undefined> {
    await this.ensure();
    const rows = await this.read(statement('SELECT id, created, record FROM pilots WHERE id = ?', 'select', [id]));
    return rows[0] === undefined ? undefined : toStored(rows[0]);
  }

  async list(filter: PilotFilter, limit: number, offset: number): Promise<{ total: number; pilots: StoredPilot[] }> {
    await this.ensure();
    const conditions = FILTER_COLUMNS.filter(([key]) => filter[key] !== undefined);
    const where = conditions.length === 0 ? '' : ` WHERE ${conditions.map(([, sql]) => sql).join(' AND ')}`;
    const params = conditions.map(([key]) => filter[key] as string);
    const [countResult, pageResult] = await this.batches.run(
      this.ref,
      [
        statement(`SELECT count(*) FROM pilots${where}`, 'select', params),
        statement(`SELECT id, created, record FROM pilots${where} ORDER BY id LIMIT ? OFFSET ?`, 'select', [
          ...params,
          limit,
          offset,
        ]),
      ],
      true,
    );
    return { total: Number(countResult?.rows[0]?.[0] ?? 0), pilots: (pageResult?.rows ?? []).map(toStored) };
  }

  async all(): Promise<StoredPilot[]> {
    await this.ensure();
    return (await this.read(statement('SELECT id, created, record FROM pilots ORDER BY id', 'select'))).map(toStored);
  }
}
