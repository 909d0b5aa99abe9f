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

/**
 * Whether a time value is 'now' (any case, any surrounding white space). No
 * character but w and W lowers to w, so a text without either (every ISO
 * date) is answered without making a lowered copy of it.
 */
function isNow(value: unknown): boolean {
  return (
    typeof value === 'string' && (value.includes('w') || value.includes('W')) && value.trim().toLowerCase() === 'now'
  );
}

/** `name(?, ?, …)` for each number of arguments, made once: a query may call a date function once per row. */
function expressionsOf(name: string): (count: number) => string {
  const made: string[] = [];
  return (count) => (made[count] ??= `${name}(${Array.from({ length: count }, () => '?').join(', ')})`);
}

export class DeterministicFunctions {
  private context: BatchContext = newBatchContext();
  /** Seeded from the context when a batch first calls random(): most batches never do (replay sets one per entry). */
  private generator: SplitMix64 | null = null;

  constructor(db: Database.Database) {
    db.function('random', { deterministic: false, safeIntegers: true }, () => BigInt.asIntN(64, this.random.next()));
    db.function('randomblob', { deterministic: false, safeIntegers: true }, (size: unknown) => this.randomBlob(size));
    for (const [name, timeArgs, nowWhenFewer] of TIME_FUNCTIONS) {
      const expression = expressionsOf(name);
      db.function(name, { deterministic: true, varargs: true, safeIntegers: true }, (...args: unknown[]) =>
        this.timeFunction(expression, timeArgs, nowWhenFewer, args),
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

  /** `args` is the call's own array (a rest parameter), so 'now' is put in its place there. */
  private timeFunction(
    expression: (count: number) => string,
    timeArgs: readonly number[],
    nowWhenFewer: number,
    args: unknown[],
  ): unknown {
    if (args.length < nowWhenFewer) args.push('now');
    for (const at of timeArgs) if (isNow(args[at])) args[at] = this.clockText();
    return plainCall(expression(args.length), args);
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
 * costs a lookup per argument instead of a call into SQLite.
 *
 * Per expression, a tree of maps with one level per argument, keyed by the
 * argument's value itself: a map tells a text '5', an integer 5n and a real
 * 5 apart, as SQLite does, without a key string made for every call.
 */
type ResultTree = Map<unknown, unknown>;
const plainResults = new Map<string, ResultTree>();
/** Entries of the memo: its results and the maps under each expression's first level (so calls of many arguments are bounded too). */
let keptResults = 0;
/** Results and maps kept at most; past this the memo starts over. */
const PLAIN_RESULTS = 4096;
/** An argument of a key is at most this long: a call with a longer one is not kept. */
const MAX_KEY_ARGUMENT = 256;

/** Whether a call with this argument is kept: not a blob or a long text; not -0, which a map takes for 0. */
function isKeyArgument(arg: unknown): boolean {
  switch (typeof arg) {
    case 'string':
      return arg.length <= MAX_KEY_ARGUMENT;
    case 'number':
      return !Object.is(arg, -0);
    case 'bigint':
      return true;
    default:
      return arg === null;
  }
}

function plainCall(expression: string, args: unknown[]): unknown {
  const last = args.length - 1;
  if (last < 0 || !args.every(isKeyArgument)) return callPlain(expression, args);
  let level = plainResults.get(expression);
  if (level === undefined) plainResults.set(expression, (level = new Map()));
  for (let i = 0; i < last; i++) {
    let next = level.get(args[i]) as ResultTree | undefined;
    if (next === undefined) {
      level.set(args[i], (next = new Map()));
      keptResults++;
    }
    level = next;
  }
  // SQLite answers null, never undefined: undefined means not kept.
  const kept = level.get(args[last]);
  if (kept !== undefined) return kept;
  const result = callPlain(expression, args);
  if (keptResults >= PLAIN_RESULTS) {
    plainResults.clear();
    keptResults = 0;
  } else {
    level.set(args[last], result);
    keptResults++;
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
