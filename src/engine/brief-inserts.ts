/**
 * INSERTs whose work SQLite's own bytecode shows to be brief: one row, no
 * loop, no trigger (nor foreign-key action, which SQLite runs as one), no
 * function call (a CHECK, DEFAULT or generated column could call an
 * expensive one), no virtual table, no sort, no RETURNING. Such a statement
 * cannot run long whatever its values, so an engine process may skip the
 * progress record it writes before each statement (progress-board.ts): that
 * record is what names a runaway statement, and these cannot be one.
 *
 * A text is judged the second time it is seen on a connection, and then
 * kept until the schema changes: a batch repeats one INSERT with new
 * parameters, while an imported dump's INSERTs, each with its own literal
 * values, are seen once and never cost an EXPLAIN.
 */
import type { Connection } from './connection-pool';
import { rewriteForStorage } from './dialect/rewrite';

/** The jumps a one-row INSERT's program may hold: a backward one (a loop) is not brief, but for the prologue's single Goto back to the start. */
const JUMPS: readonly string[] = [
  'Goto',
  'If',
  'IfNot',
  'NotNull',
  'IsNull',
  'Eq',
  'Ne',
  'Lt',
  'Le',
  'Gt',
  'Ge',
  'NoConflict',
  'Found',
  'NotFound',
  'NotExists',
  'SeekRowid',
  'FkIfZero',
  'Once',
  'MustBeInt',
];

/**
 * Opcodes of a one-row INSERT's straight-line program: values, affinity and
 * constraint checks (the arithmetic and logic of a CHECK such as
 * `x IN (0, 1)`, a fixed cost per value), the row and its index entries; and
 * its jumps.
 */
const BRIEF_OPCODES: ReadonlySet<string> = new Set([
  'Init',
  'Transaction',
  'Halt',
  'HaltIfNull',
  'OpenWrite',
  'OpenRead',
  'Close',
  'Noop',
  'Variable',
  'Integer',
  'Int64',
  'Real',
  'String8',
  'String',
  'Null',
  'SoftNull',
  'Blob',
  'Copy',
  'SCopy',
  'IntCopy',
  'Affinity',
  'TypeCheck',
  'RealAffinity',
  'NewRowid',
  'MakeRecord',
  'Insert',
  'IdxInsert',
  'Rowid',
  'Column',
  'Delete',
  'IdxDelete',
  'FkCounter',
  'Explain',
  'ReleaseReg',
  'BitAnd',
  'BitOr',
  'BitNot',
  'ShiftLeft',
  'ShiftRight',
  'Add',
  'Subtract',
  'Multiply',
  'Divide',
  'Remainder',
  'Not',
  'And',
  'Or',
  'IsTrue',
  'Cast',
  ...JUMPS,
]);
const JUMP_OPCODES: ReadonlySet<string> = new Set(JUMPS);

/** Texts seen once, and judgements kept, per connection: past this, each starts over. */
const KEPT = 256;

interface Judgements {
  /** The schema version they were made under (SchemaCache.version). */
  readonly schemaVersion: bigint;
  readonly seen: Set<string>;
  readonly brief: Map<string, boolean>;
}

const judgementsOf = new WeakMap<Connection, Judgements>();

/**
 * Whether `sql`, an INSERT about to run on `connection` inside its write
 * transaction with `params` (what it is bound to; its program is read with
 * them), is brief; false the first time a text is seen. Judgements go
 * when the schema version read at the transaction's start moves (another
 * connection changed the schema), and when this connection runs anything
 * but a read or a row write (forgetBriefInserts): a trigger created since
 * could make the same text long.
 */
export function isBriefInsert(connection: Connection, sql: string, params: () => unknown[]): boolean {
  const schemaVersion = connection.schema.version;
  let judgements = judgementsOf.get(connection);
  if (judgements === undefined || judgements.schemaVersion !== schemaVersion) {
    judgements = { schemaVersion, seen: new Set(), brief: new Map() };
    judgementsOf.set(connection, judgements);
  }
  const known = judgements.brief.get(sql);
  if (known !== undefined) return known;
  if (!judgements.seen.has(sql)) {
    if (judgements.seen.size >= KEPT) judgements.seen.clear();
    judgements.seen.add(sql);
    return false;
  }
  const brief = programIsBrief(connection, sql, params());
  if (judgements.brief.size >= KEPT) judgements.brief.clear();
  judgements.brief.set(sql, brief);
  return brief;
}

/** Called before this connection runs a statement that may change its schema (DDL, a savepoint's rollback). */
export function forgetBriefInserts(connection: Connection): void {
  judgementsOf.delete(connection);
}

/** Every opcode on the list, and no jump backwards but the prologue's (Transaction's Goto back to the start). */
function programIsBrief(connection: Connection, sql: string, params: unknown[]): boolean {
  let ops: Array<{ addr: number; opcode: string; p2: number }>;
  try {
    const stored = rewriteForStorage({ sql, kind: 'insert', level: 'table', readonly: false });
    ops = connection.db
      .prepare(`EXPLAIN ${stored}`)
      .safeIntegers(false)
      .all(...params) as typeof ops;
  } catch {
    return false;
  }
  let backwards = 0;
  for (const op of ops) {
    if (!BRIEF_OPCODES.has(op.opcode)) return false;
    if (JUMP_OPCODES.has(op.opcode) && op.p2 > 0 && op.p2 <= op.addr) backwards++;
  }
  return backwards <= 1;
}
