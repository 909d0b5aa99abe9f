/**
 * The rules of classroom pilot records: the schema, the
 * personal-data guard, and the sequence of decisions per scope, checked and
 * stored one record at a time so that two records for a scope cannot both
 * pass the check.
 */
import type { Principal } from '../access/principal';
import { EngineError } from '../errors';
import { findPersonalData } from './personal-data';
import type { PilotRecord } from './pilot-schema';
import type { PilotFilter, PilotStore, StoredPilot } from './pilot-store';
import { summarize, type PilotSummary, type SummaryGrouping } from './pilot-summary';
import { validatePilot } from './pilot-validation';

export class PilotService {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: PilotStore) {}

  /** `by`: the token that sent it, named by the journal entry of the insert. */
  create(record: unknown, by?: Principal): Promise<StoredPilot> {
    const pilot = this.check(record);
    const created = this.tail.then(() => this.storeInSequence(pilot, by));
    this.tail = created.catch(() => undefined);
    return created;
  }

  private check(record: unknown): PilotRecord {
    const result = validatePilot(record);
    if (!result.ok)
      throw new EngineError(
        'PILOT_INVALID',
        { count: result.violations.length },
        { details: { violations: result.violations } },
      );
    const texts = [...result.record.incidents, result.record.notes_without_personal_data ?? ''];
    const kinds = findPersonalData(texts);
    // Say what kind of data was found, never the data itself.
    if (kinds.length > 0)
      throw new EngineError('PILOT_PERSONAL_DATA', { kinds: kinds.join(', ') }, { details: { kinds } });
    return result.record;
  }

  /** After retirar nothing more; after corregir another commit; after conservar or volver_a_pilotar anything. */
  private async storeInSequence(pilot: PilotRecord, by: Principal | undefined): Promise<StoredPilot> {
    const latest = await this.store.latestOfScope(pilot.scope);
    const scope = `${pilot.scope.level} / ${pilot.scope.subject} / ${pilot.scope.objective}`;
    if (latest?.pilot.decision === 'retirar') throw new EngineError('PILOT_SCOPE_RETIRED', { id: latest.id, scope });
    if (latest?.pilot.decision === 'corregir' && latest.pilot.commit === pilot.commit) {
      throw new EngineError('PILOT_SAME_COMMIT', { id: latest.id, commit: pilot.commit });
    }
    return this.store.insert(pilot, by);
  }

  async get(id: number): Promise<StoredPilot> {
    const found = await this.store.get(id);
    if (!found) throw new EngineError('PILOT_NOT_FOUND', { id });
    return found;
  }

  list(filter: PilotFilter, limit: number, offset: number): Promise<{ total: number; pilots: StoredPilot[] }> {
    return this.store.list(filter, limit, offset);
  }

  async summary(grouping?: SummaryGrouping): Promise<PilotSummary> {
    return summarize(await this.store.all(), grouping);
  }
}
