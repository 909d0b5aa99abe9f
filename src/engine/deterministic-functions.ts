/**
 * Replay must give the values a batch gave live, so the
 * functions whose results depend on the clock or on chance are replaced, on
 * every connection, by versions that read a per-batch clock and seed. The
 * journal records both, and replay sets them back.
 *
 * better-sqlite3's `db.function()` overrides SQLite's built-ins, even inside a
 * column's DEFAULT. Date functions are computed by the real
 * built-ins on a plain in-memory connection, with 'now' replaced by the fixed
 * clock; the literal text 'now' anywhere else is ordinary data.
 */
import { randomFillSync } from 'node:crypto';
import Database from 'better-sqlite3';
import { EngineError } from '../errors';

/** The clock and the seed of one batch. */
export interface BatchContext {
  readonly clockMs: number;
  /** 16 hexadecimal characters. */
  readonly seed: string;
}

const MASK = (1n << 64n) - 1n;

/** SplitMix64: small, fast enough, and the same everywhere. */
class SplitMix64 {
  private state: bigint;
  constructor(seed: string) {
    this.state = BigInt(`0x${seed}`) & MASK;
  }
  next(): bigint {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }
}

/** SQLite's limit on a string or BLOB (SQLITE_MAX_LENGTH). */
const MAX_BLOB = 1_000_000_000;

/** Which argument of each date function is the time value, and whether it may be left out (meaning 'now'). */
const TIME_FUNCTIONS: ReadonlyArray<[name: string, timeArgs: number[], nowWhenFewer: number]> = [
  ['date', [0], 1],
  ['time', [0], 1],
  ['datetime', [0], 1],
  ['julianday', [0], 1],
  ['unixepoch', [0], 1],
  ['strftime', [1], 2],
  ['timediff', [0, 1], 0],
];

const CURRENT: ReadonlyArray<[name: string, sql: string]> = [
  ['current_timestamp', 'datetime(?)'],
  ['current_date', 'date(?)'],
  ['current_time', 'time(?)'],
];

function isNow(value: unknown): boolean {
  return typeof value === 'string' && value.trim().toLowerCase() === 'now';
}

export class DeterministicFunctions {
  private context: BatchContext = newBatchContext();
  /** Seeded from the context when a batch first calls random(): most batches never do (replay sets one per entry). */
  private generator: SplitMix64 | null = null;

  constructor(db: Database.Database) {
    db.function('random', { deterministic: false, safeIntegers: true }, () => BigInt.asIntN(64, this.random.next()));
    db.function('randomblob', { deterministic: false, safeIntegers: true }, (size: unknown) => this.randomBlob(size));
    for (const [name, timeArgs, nowWhenFewer] of TIME_FUNCTIONS) {
      db.function(name, { deterministic: true, varargs: true, safeIntegers: true }, (...args: unknown[]) =>
        this.timeFunction(name, timeArgs, nowWhenFewer, args),
      );
    }
    for (const [name, sql] of CURRENT) {
      db.function(name, { deterministic: true, safeIntegers: true }, () => plainCall(sql, [this.clockText()]));
    }
  }

  /** Every batch runs with a context; one that is not replayed gets a fresh one. */
  set(context: BatchContext): void {
    this.context = context;
    this.generator = null;
  }

  private get random(): SplitMix64 {
    this.generator ??= new SplitMix64(this.context.seed);
    return this.generator;
  }

  private clockText(): string {
    return new Date(this.context.clockMs).toISOString().replace('T', ' ').replace('Z', '');
  }

  private randomBlob(size: unknown): Buffer {
    const length = Math.max(1, Number(size) || 0);
    if (length > MAX_BLOB)
      throw new EngineError('VALUE_TOO_LARGE', { detail: 'randomblob() larger than 1000000000 bytes' });
    const blob = Buffer.alloc(length);
    for (let i = 0; i < length; i += 8) {
      const word = this.random.next();
      for (let b = 0; b < 8 && i + b < length; b++) blob[i + b] = Number((word >> BigInt(8 * b)) & 0xffn);
    }
    return blob;
  }

  private timeFunction(name: string, timeArgs: number[], nowWhenFewer: number, args: unknown[]): unknown {
    const fixed = args.length < nowWhenFewer ? [...args, 'now'] : [...args];
    for (const at of timeArgs) if (isNow(fixed[at])) fixed[at] = this.clockText();
    const placeholders = fixed.map(() => '?').join(', ');
    return plainCall(`${name}(${placeholders})`, fixed);
  }
}

/**
 * SQLite's own date functions, called on the text of the batch's clock: one
 * in-memory database for the whole process, made when first needed. (One per
 * open database cost a SQLite connection each, lookaside memory and all, for
 * every copy a class keeps open.) Calls are synchronous, so they never
 * interleave.
 */
let plain: Database.Database | undefined;
const plainStatements = new Map<string, Database.Statement>();

/**
 * Results of the date functions by expression and arguments. They are pure
 * (the clock is one of the arguments by now), and a lesson's queries call
 * them with the same few hundred dates on every run and for every student
 * (strftime('%Y', InvoiceDate) over every invoice): a result found here
 * costs a key and a lookup instead of a call into SQLite.
 */
const plainResults = new Map<string, unknown>();
/** Results kept at most; past this the memo starts over. */
const PLAIN_RESULTS = 4096;
/** An argument of a key is at most this long: a call with a longer one is not kept. */
const MAX_KEY_ARGUMENT = 256;

/** The memo's key of a call; undefined for a call not worth keeping (a blob or a long text). */
function plainKey(expression: string, args: readonly unknown[]): string | undefined {
  let key = expression;
  for (const arg of args) {
    if (arg === null) key += '\u0000z';
    else if (typeof arg === 'bigint') key += `\u0000i${arg}`;
    else if (typeof arg === 'number') key += `\u0000r${arg}`;
    else if (typeof arg === 'string' && arg.length <= MAX_KEY_ARGUMENT) key += `\u0000t${arg.length}:${arg}`;
    else return undefined;
  }
  return key;
}

function plainCall(expression: string, args: unknown[]): unknown {
  const key = plainKey(expression, args);
  // SQLite answers null, never undefined: undefined means not kept.
  const kept = key === undefined ? undefined : plainResults.get(key);
  if (kept !== undefined) return kept;
  const result = callPlain(expression, args);
  if (key !== undefined) {
    if (plainResults.size >= PLAIN_RESULTS) plainResults.clear();
    plainResults.set(key, result);
  }
  return result;
}

function callPlain(expression: string, args: unknown[]): unknown {
  let statement = plainStatements.get(expression);
  if (statement === undefined) {
    if (plain === undefined) {
      plain = new Database(':memory:');
      plain.defaultSafeIntegers(true);
    }
    statement = plain.prepare(`SELECT ${expression}`).pluck();
    plainStatements.set(expression, statement);
  }
  return statement.get(...args);
}

/** Seeds are cut from a block of random bytes filled 512 seeds at a time (one call into the CSPRNG each, not one per request). */
const seedBlock = Buffer.alloc(4096);
let seedAt = seedBlock.length;

export function newBatchContext(): BatchContext {
  if (seedAt === seedBlock.length) {
    randomFillSync(seedBlock);
    seedAt = 0;
  }
  const seed = seedBlock.toString('hex', seedAt, seedAt + 8);
  seedAt += 8;
  return { clockMs: Date.now(), seed };
}
