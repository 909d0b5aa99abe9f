/**
 * Reads whose cost is bounded by their query plan, so that they may run in
 * the server's own process like point reads (bounded-read.ts), without the
 * round trip to an engine process. better-sqlite3 cannot interrupt a
 * statement, so a read run here must be bounded by what is known before it
 * runs: a long one would stop the service for every class.
 *
 * The bound, decided conservatively:
 * - rows visited: SQLite's plan (EXPLAIN QUERY PLAN) is a tree of loops;
 *   loops at one level nest, so their row counts multiply, and a correlated
 *   subquery runs once per row of its level. A loop counts its table's whole
 *   row count (the tables its name may stand for in the text, or else the
 *   largest table, subquery result or VALUES list the statement reads),
 *   except a search by equality on an index: the most rows one key holds,
 *   times how many keys a list of literals may probe. The total must stay
 *   under ROW_BUDGET; calls of functions written in JavaScript, under
 *   SCRIPT_CALL_BUDGET.
 * - bytes touched: every visit may read the largest row of the tables read,
 *   and may grow it (each `||`, hex(), quote() may double a value, strftime()
 *   may write 8 bytes for 2, group_concat() may join every row); visits
 *   times that must stay under BYTE_BUDGET. LIKE and GLOB need a literal
 *   pattern, short and with few wildcards (SQLite's matcher then does not
 *   backtrack far: measured at about upper()'s cost per byte).
 * - functions: only the allowlist below, read from the bytecode (so a view's
 *   hidden calls count too); no virtual table, no recursion, no window.
 * - what is read to decide stays cheap: texts of at most MAX_TOKENS, no view
 *   reading a view, databases of at most MAX_FILE_BYTES, and none with
 *   sqlite_stat4 (the plan read here must be the one run). The plan is kept
 *   until the schema changes, the tables' facts until the data does.
 *
 * The budgets were measured (test/bench/planned-reads.mjs decide, CPU
 * time): the largest statements admitted cost a few milliseconds (upper()
 * over 12,000 rows of 300 bytes 4.3 ms, a join by key of 24,000 rows
 * 0.8 ms), far from what the bound assumes of every visit.
 */
import type Database from 'better-sqlite3';
import type { Connection } from '../connection-pool';
import type { ExecStatement } from '../protocol';
import { isPunct, isWord, tokenize, type Token } from '../dialect/tokenize';
import { PlanStats } from './plan-stats';
import { memoByText } from './text-memo';

/** Most row visits (loop iterations, sorted rows) of a statement run in the server process. */
export const ROW_BUDGET = 50_000;
/** Most visits × bytes per visit. */
export const BYTE_BUDGET = 4_000_000;
/** Longest LIKE/GLOB pattern, and most wildcards in one. */
const MAX_PATTERN = 64;
const MAX_WILDCARDS = 3;
/** Most doublings a value may go through (|| and the like). */
const MAX_GROWTH_STEPS = 8;

type FunctionCost = 'plain' | 'script' | 'doubles' | 'eightfold' | 'per-row' | 'pattern' | 'quadratic';

/**
 * Calls of functions written in JavaScript (deterministic-functions.ts: the
 * clock, chance and date functions), rows visited times call sites: each
 * costs 2–8 µs (measured), hundreds of times SQLite's own.
 */
export const SCRIPT_CALL_BUDGET = 1_000;
/** Largest database planned here: the facts are gathered by walking a table's pages (plan-stats.ts), big values included. */
export const MAX_FILE_BYTES = 32 * 1024 * 1024;
/** Most tokens of a statement decided here: preparing it (three times: the statement, EXPLAIN, the plan) is work too. */
const MAX_TOKENS = 4_000;
/** Most view text a statement may expand (its tokens times the views' characters): a view's code is copied where it is read. */
const MAX_VIEW_EXPANSION = 1_000_000;

/** Functions whose work is small and in proportion to their arguments. Anything else sends the statement to an engine. */
const FUNCTIONS: ReadonlyMap<string, FunctionCost> = new Map<string, FunctionCost>([
  ...[
    'abs',
    'round',
    'upper',
    'lower',
    'length',
    'octet_length',
    'substr',
    'substring',
    'ifnull',
    'nullif',
    'iif',
    'if',
    'coalesce',
    'typeof',
    'sign',
    'unicode',
    'char',
    'unhex',
    'likely',
    'unlikely',
    'likelihood',
    'ceil',
    'ceiling',
    'floor',
    'trunc',
  ].map((name): [string, FunctionCost] => [name, 'plain']),
  // trim(x) is linear; trim(x, characters) checks every stripped character against the whole set.
  ...['trim', 'ltrim', 'rtrim'].flatMap((name): Array<[string, FunctionCost]> => [
    [`${name}(1)`, 'plain'],
    [`${name}(2)`, 'quadratic'],
  ]),
  ...[
    'random',
    'date',
    'time',
    'datetime',
    'julianday',
    'unixepoch',
    'timediff',
    'current_timestamp',
    'current_date',
    'current_time',
  ].map((name): [string, FunctionCost] => [name, 'script']),
  ...['count', 'sum', 'total', 'avg', 'min', 'max'].map((name): [string, FunctionCost] => [name, 'plain']),
  ['hex', 'doubles'],
  ['quote', 'doubles'],
  // Written in JavaScript too (counted as a script call as well).
  ['strftime', 'eightfold'],
  ['group_concat', 'per-row'],
  ['string_agg', 'per-row'],
  ['like', 'pattern'],
  ['glob', 'pattern'],
  ['instr', 'quadratic'],
]);

/** Words that never belong in a read decided here (recursion, windows, matching by a function we do not bound). */
const REFUSED_WORDS = ['RECURSIVE', 'OVER', 'WINDOW', 'MATCH', 'REGEXP'];

/** What the text alone says of a statement; undefined when the text alone rules it out. */
export interface TextFacts {
  readonly tokens: number;
  /** IN or OR: a search may probe one key per literal. */
  readonly lists: boolean;
  /** LIKE / GLOB operators with a literal pattern. */
  readonly patterns: number;
  /** The longest literal (a value the statement itself brings). */
  readonly longestLiteral: number;
  /** Every name the text mentions, in lower case (which views it may read). */
  readonly names: ReadonlySet<string>;
  /** Values to bind for EXPLAIN (NULLs: without sqlite_stat4 the plan does not depend on them). */
  readonly placeholders: readonly unknown[];
  /** What stands before each name that may label a loop of the plan (aliasSources). */
  readonly aliases: ReadonlyMap<string, readonly string[]>;
}

/** A name a plan line could be misread through: the plan prints names as they are. */
function misleadingName(token: Token): boolean {
  if (token.kind !== 'identifier' && token.kind !== 'string') return false;
  const value = token.value ?? token.text;
  return /\s/.test(value) && /using|index|key|constant|rowid|subquery|scan|search/i.test(value);
}

function wildcards(pattern: string, glob: boolean): number {
  let count = 0;
  for (const c of pattern) if (glob ? c === '*' || c === '?' || c === '[' : c === '%' || c === '_') count++;
  return count;
}

/** Whether a schema's object names or views' texts hold a name a plan line could be misread through. */
function misleads(names: readonly string[], viewTexts: readonly string[]): boolean {
  if (names.some((name) => /\s/.test(name))) return true;
  try {
    return viewTexts.some((text) => tokenize(text).some(misleadingName));
  } catch {
    return true;
  }
}

/**
 * Whether a common table expression is named more than once after its
 * definition: SQLite may copy its code into every place that reads it, and
 * a chain of them read twice each doubles at every link.
 */
function reusesCommonTable(tokens: readonly Token[]): boolean {
  if (!tokens.some((token) => isWord(token, 'WITH'))) return false;
  const uses = new Map<string, number>();
  for (const token of tokens) {
    if (token.kind === 'word' || token.kind === 'identifier' || token.kind === 'string') {
      const name = (token.kind === 'word' ? token.text : (token.value ?? token.text)).toLowerCase();
      uses.set(name, (uses.get(name) ?? 0) + 1);
    }
  }
  for (const [i, token] of tokens.entries()) {
    if ((token.kind !== 'word' && token.kind !== 'identifier') || !definesCommonTable(tokens, i)) continue;
    const name = (token.kind === 'word' ? token.text : (token.value ?? token.text)).toLowerCase();
    if ((uses.get(name) ?? 0) > 2) return true;
  }
  return false;
}

/** NULLs for the statement's parameters, as better-sqlite3 binds them (`?` by position, `:a` `@a` `$a` by name); undefined for `?NNN`. */
function placeholdersOf(tokens: readonly Token[]): unknown[] | undefined {
  let anonymous = 0;
  const named: Record<string, null> = {};
  let hasNamed = false;
  for (const token of tokens) {
    if (token.kind !== 'parameter') continue;
    if (token.text === '?') anonymous++;
    else if (token.text.startsWith('?')) return undefined;
    else {
      named[token.text.slice(1)] = null;
      hasNamed = true;
    }
  }
  const values: unknown[] = Array.from({ length: anonymous }, () => null);
  if (hasNamed) values.push(named);
  return values;
}

function nameOfToken(token: Token): string {
  return token.kind === 'word' ? token.text : (token.value ?? token.text);
}

/** Marks in aliasSources: the name follows FROM, JOIN or a comma (a table read by its own name), or a subquery's `)`, or is a common table. */
const FROM_ITEM = '#from';
const UNKNOWN = '#unknown';

/**
 * For each name that is not part of a dotted name: what stands before it,
 * skipping one AS (`Track t`, `Track AS t`: t ← track). A plan line names a
 * loop by its alias, or by its table when it has none, so the tables a loop
 * of that name may read are found here; anything else that might define the
 * name (a subquery, a common table) makes it unknown, and the loop then
 * counts as the largest thing the statement reads.
 */
export function aliasSources(tokens: readonly Token[]): Map<string, string[]> {
  const sources = new Map<string, string[]>();
  const add = (name: string, source: string): void => {
    const list = sources.get(name) ?? [];
    list.push(source);
    sources.set(name, list);
  };
  for (const [i, token] of tokens.entries()) {
    if (
      (token.kind !== 'word' && token.kind !== 'identifier' && token.kind !== 'string') ||
      isPunct(tokens[i - 1], '.') ||
      isPunct(tokens[i + 1], '.')
    )
      continue;
    const name = nameOfToken(token).toLowerCase();
    if (definesCommonTable(tokens, i)) {
      add(name, UNKNOWN);
      continue;
    }
    const before = isWord(tokens[i - 1], 'AS') ? tokens[i - 2] : tokens[i - 1];
    if (before === undefined) continue;
    if (isWord(before, 'FROM', 'JOIN') || isPunct(before, ',')) add(name, FROM_ITEM);
    else if (isPunct(before, ')')) add(name, UNKNOWN);
    else if (
      before.kind === 'identifier' ||
      before.kind === 'string' ||
      (before.kind === 'word' && !KEYWORDS_BEFORE_NAMES.has(before.value ?? ''))
    )
      add(name, nameOfToken(before).toLowerCase());
  }
  return sources;
}

/** Keywords that may stand before a name that is no FROM item (a column, an alias of an expression's value). */
const KEYWORDS_BEFORE_NAMES = new Set([
  'SELECT',
  'WHERE',
  'ON',
  'AND',
  'OR',
  'NOT',
  'BY',
  'WHEN',
  'THEN',
  'ELSE',
  'CASE',
  'DISTINCT',
  'ALL',
  'HAVING',
  'USING',
  'IS',
  'IN',
  'BETWEEN',
  'LIKE',
  'GLOB',
  'END',
  'LIMIT',
  'OFFSET',
  'DESC',
  'ASC',
  'NULL',
  'EXISTS',
  'WITH',
  'COLLATE',
  'ESCAPE',
  'CAST',
  'SET',
  'VALUES',
  'UNION',
  'EXCEPT',
  'INTERSECT',
  'INDEXED',
  'RETURNING',
]);

/** Whether tokens[at] is a name defined by `name AS …` or `name (columns) AS …`. */
function definesCommonTable(tokens: readonly Token[], at: number): boolean {
  if (isWord(tokens[at + 1], 'AS')) return true;
  if (!isPunct(tokens[at + 1], '(')) return false;
  let i = at + 2;
  while (i < tokens.length && !isPunct(tokens[i], ')')) i++;
  return isWord(tokens[i + 1], 'AS');
}

/** Whether one view's text names another view. */
function viewsNest(views: ReadonlyArray<{ name: string; sql: string }>): boolean {
  const names = new Set(views.map((view) => view.name.toLowerCase()));
  try {
    return views.some((view) =>
      tokenize(view.sql).some(
        (token, i) =>
          i > 3 &&
          (token.kind === 'word' || token.kind === 'identifier' || token.kind === 'string') &&
          names.has((token.kind === 'word' ? token.text : (token.value ?? token.text)).toLowerCase()),
      ),
    );
  } catch {
    return true;
  }
}

/** The text's facts, or undefined when the text alone rules the statement out. */
export function textFacts(sql: string): TextFacts | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(sql);
  } catch {
    return undefined;
  }
  while (tokens.length > 0 && tokens[tokens.length - 1]?.kind === 'semicolon') tokens.pop();
  if (!isWord(tokens[0], 'SELECT', 'WITH', 'VALUES') || tokens.length > MAX_TOKENS || reusesCommonTable(tokens))
    return undefined;
  let lists = false;
  let patterns = 0;
  let longestLiteral = 0;
  for (const [i, token] of tokens.entries()) {
    if (token.kind === 'semicolon' || misleadingName(token)) return undefined;
    if (token.kind === 'word' && REFUSED_WORDS.includes(token.value ?? '')) return undefined;
    if (token.kind === 'string' || token.kind === 'blob' || token.kind === 'number')
      longestLiteral = Math.max(longestLiteral, token.text.length);
    if (isWord(token, 'IN', 'OR')) lists = true;
    if (isWord(token, 'LIKE', 'GLOB')) {
      const pattern = tokens[i + 1];
      if (pattern?.kind !== 'string' || isPunct(tokens[i - 1], '.')) return undefined;
      const text = pattern.value ?? '';
      if (text.length > MAX_PATTERN || wildcards(text, isWord(token, 'GLOB')) > MAX_WILDCARDS) return undefined;
      patterns++;
    }
    if (
      token.kind === 'word' &&
      isPunct(tokens[i + 1], '(') &&
      !FUNCTIONS.has((token.value ?? '').toLowerCase()) &&
      DENIED_CALLS.has((token.value ?? '').toLowerCase())
    )
      return undefined;
  }
  const names = new Set<string>();
  for (const token of tokens)
    if (token.kind === 'word' || token.kind === 'identifier' || token.kind === 'string')
      names.add(nameOfToken(token).toLowerCase());
  const placeholders = placeholdersOf(tokens);
  if (placeholders === undefined) return undefined;
  return { tokens: tokens.length, lists, patterns, longestLiteral, names, placeholders, aliases: aliasSources(tokens) };
}

/** Calls refused from the text already, before any EXPLAIN (the bytecode check refuses every other unknown call). */
const DENIED_CALLS = new Set([
  'randomblob',
  'zeroblob',
  'replace',
  'printf',
  'format',
  'concat',
  'concat_ws',
  'like',
  'glob',
  'json',
  'json_group_array',
  'json_group_object',
  'load_extension',
  'fts5',
  'generate_series',
]);

/** Text facts of recent texts (a class sends the same statements over and over). */
const TEXT_CACHE_SIZE = 512;
const TEXT_CACHE_MAX_LENGTH = 4096;
const cachedTextFacts = memoByText(textFacts, TEXT_CACHE_SIZE, TEXT_CACHE_MAX_LENGTH);

/** The text's facts, from a small cache; undefined when the statement cannot be a planned read. */
export function plannedShape(statement: ExecStatement): TextFacts | undefined {
  return statement.kind === 'select' ? cachedTextFacts(statement.sql) : undefined;
}

/** One line of EXPLAIN QUERY PLAN, with the lines under it. */
interface PlanNode {
  readonly id: number;
  readonly detail: string;
  readonly children: PlanNode[];
}

/** What the bytecode says: tables and indexes it opens, and what its calls may cost. */
interface CodeFacts {
  readonly tables: Set<string>;
  readonly indexes: Set<string>;
  growthSteps: number;
  perRow: boolean;
  patterns: number;
  quadratic: boolean;
  /** Call sites of functions written in JavaScript. */
  scriptCalls: number;
}

/** Virtual tables, writes, triggers, windows and schema loads: none belongs in a read bounded here. */
const REFUSED_OPCODES = new Set([
  'VBegin',
  'VCreate',
  'VDestroy',
  'VOpen',
  'VCheck',
  'VInitIn',
  'VFilter',
  'VColumn',
  'VNext',
  'VRename',
  'VUpdate',
  'OpenWrite',
  'Program',
  'AggValue',
  'AggInverse',
  'ParseSchema',
]);

class NotBounded extends Error {}

function refuse(why: string): never {
  throw new NotBounded(why);
}

function readCode(db: Database.Database, sql: string, stats: PlanStats, placeholders: readonly unknown[]): CodeFacts {
  const facts: CodeFacts = {
    tables: new Set(),
    indexes: new Set(),
    growthSteps: 0,
    perRow: false,
    patterns: 0,
    quadratic: false,
    scriptCalls: 0,
  };
  const ops = db
    .prepare(`EXPLAIN ${sql}`)
    .safeIntegers(false)
    .all(...placeholders) as Array<{ opcode: string; p2: number; p3: number; p4: unknown }>;
  for (const op of ops) {
    const code = op.opcode;
    if (REFUSED_OPCODES.has(code)) refuse(code);
    if (code === 'OpenRead' || code === 'ReopenIdx') {
      if (op.p3 !== 0) refuse('not the main database');
      const object = stats.objectAt(op.p2) ?? refuse('unknown root page');
      if (object.type === 'index') facts.indexes.add(object.name);
      facts.tables.add(object.table);
    } else if (code === 'Concat') {
      facts.growthSteps++;
    } else if (
      code === 'Function' ||
      code === 'PureFunc' ||
      code === 'AggStep' ||
      code === 'AggStep1' ||
      code === 'AggFinal'
    ) {
      const call = /^([A-Za-z_0-9]+)\((-?\d+)\)$/.exec(String(op.p4)) ?? refuse('unnamed function');
      const name = (call[1] as string).toLowerCase();
      const cost = FUNCTIONS.get(`${name}(${call[2] as string})`) ?? FUNCTIONS.get(name) ?? refuse(`function ${name}`);
      if (code === 'AggFinal') continue;
      if (cost === 'script') facts.scriptCalls++;
      else if (cost === 'doubles') facts.growthSteps++;
      else if (cost === 'eightfold') {
        facts.growthSteps += 3;
        facts.scriptCalls++;
      } else if (cost === 'per-row') facts.perRow = true;
      else if (cost === 'pattern') facts.patterns++;
      else if (cost === 'quadratic') facts.quadratic = true;
    }
  }
  return facts;
}

function readPlan(db: Database.Database, sql: string, placeholders: readonly unknown[]): PlanNode[] {
  const rows = db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .safeIntegers(false)
    .all(...placeholders) as Array<{ id: number; parent: number; detail: string }>;
  const nodes = new Map<number, PlanNode>();
  const top: PlanNode[] = [];
  for (const row of rows) {
    const node: PlanNode = { id: row.id, detail: row.detail, children: [] };
    nodes.set(row.id, node);
    (row.parent === 0 ? top : (nodes.get(row.parent)?.children ?? refuse('orphan plan line'))).push(node);
  }
  return top;
}

/** The plan's bound, worked out level by level. */
class PlanBound {
  /** The most rows any loop named only by alias may visit: largest table read, or largest subquery result. */
  private sources = 0;
  private sourcesMax: number;

  /** `groups`: count an index search by equality as the largest group of its key, not the whole table. */
  /**
   * `literalRows`: the most rows a VALUES list may have (one per token of the
   * statement and the views it reads), the least any loop of unknown source counts.
   */
  constructor(
    private readonly stats: PlanStats,
    private readonly code: CodeFacts,
    private readonly probes: number,
    private readonly aliases: ReadonlyMap<string, readonly string[]>,
    private readonly groups: boolean,
    literalRows: number,
  ) {
    this.sourcesMax = literalRows;
    for (const table of code.tables) this.sourcesMax = Math.max(this.sourcesMax, this.tableRows(table));
  }

  /** The statement's row visits (and the largest row count a subquery may give, for the next pass). */
  visits(plan: PlanNode[], sourcesSeen: number): { visits: number; sources: number } {
    this.sources = 0;
    this.sourcesMax = Math.max(this.sourcesMax, sourcesSeen);
    const { visits } = this.level(plan);
    return { visits, sources: this.sources };
  }

  private tableRows(table: string): number {
    const rows = this.stats.rowCount(table);
    if (rows > this.stats.limit) refuse(`table ${table} over the budget`);
    return rows;
  }

  private level(nodes: readonly PlanNode[]): { visits: number; rows: number } {
    let product = 1;
    let visits = 0;
    let loops = 0;
    let correlated = 0;
    let sorts = 0;
    let compoundRows = 0;
    for (const node of nodes) {
      const detail = node.detail;
      if (detail.startsWith('SCAN ') || detail.startsWith('SEARCH ')) {
        product *= this.loopRows(detail);
        visits += product;
        loops++;
      } else if (detail === 'MULTI-INDEX OR') {
        let rows = 0;
        for (const branch of node.children) {
          const inner = this.level(branch.children);
          rows += inner.rows;
          visits += product * inner.visits;
        }
        product *= rows;
        visits += product;
        loops++;
      } else if (detail.startsWith('CO-ROUTINE ') || detail.startsWith('MATERIALIZE ')) {
        const inner = this.level(node.children);
        visits += inner.visits;
        this.sources = Math.max(this.sources, inner.rows);
      } else if (detail.startsWith('CORRELATED ')) {
        const inner = this.level(node.children);
        correlated += inner.visits + inner.rows;
      } else if (/^(SCALAR|LIST|EXISTS) SUBQUERY/.test(detail)) {
        const inner = this.level(node.children);
        visits += inner.visits + inner.rows;
      } else if (detail.startsWith('MERGE (') || detail === 'COMPOUND QUERY') {
        for (const part of node.children) {
          const inner = this.level(part.children);
          visits += 2 * inner.visits;
          compoundRows += inner.rows;
        }
      } else if (detail.startsWith('USE TEMP B-TREE')) {
        sorts++;
      } else if (detail.startsWith('BLOOM FILTER ON ') || detail === 'CREATE BLOOM FILTER') {
        continue;
      } else {
        refuse(`plan line ${detail}`);
      }
    }
    const rows = loops > 0 ? product : compoundRows > 0 ? compoundRows : 1;
    visits += rows * correlated + rows * sorts;
    return { visits, rows };
  }

  /**
   * The rows of the tables a loop of this name may read (aliasSources), or
   * undefined when the name may stand for anything else.
   */
  private namedRows(name: string | undefined): number | undefined {
    const sources = name === undefined ? undefined : this.aliases.get(name.toLowerCase());
    if (name === undefined || sources === undefined || sources.length === 0) return undefined;
    let rows = 0;
    for (const source of sources) {
      const table = this.stats.table(source === FROM_ITEM ? name : source);
      if (source === UNKNOWN || table === undefined || !this.code.tables.has(table)) return undefined;
      rows = Math.max(rows, this.tableRows(table));
    }
    return rows;
  }

  /** Rows one pass of a SCAN or SEARCH line may visit. */
  private loopRows(detail: string): number {
    if (detail === 'SCAN CONSTANT ROW') return 1;
    if (detail.includes('VIRTUAL TABLE')) refuse('virtual table');
    const index = /^(?:SCAN|SEARCH) \S+ USING (?:COVERING )?INDEX (\S+)(?: \((.*)\))?/.exec(detail);
    if (index !== null) {
      const name = index[1] as string;
      const facts = this.stats.index(name);
      if (facts === undefined || !this.code.indexes.has(name)) refuse(`index ${name}`);
      const all = this.tableRows(facts.table);
      const equal = equalities(index[2]);
      if (!this.groups || !detail.startsWith('SEARCH ') || equal === 0 || !Number.isFinite(this.probes)) return all;
      return Math.min(all, this.stats.largestGroup(name, equal) * this.probes);
    }
    const all = this.namedRows(/^(?:SCAN|SEARCH) (\S+)/.exec(detail)?.[1]) ?? Math.max(this.sourcesMax, this.sources);
    if (/^SEARCH \S+ USING INTEGER PRIMARY KEY \(rowid=\?\)/.test(detail)) return Math.min(all, this.probes);
    return all;
  }
}

/** How many leading key columns a search's constraint fixes by equality, `(a=? AND b=?)`; 0 for ranges and the like. */
function equalities(constraint: string | undefined): number {
  if (constraint === undefined) return 0;
  const terms = constraint.split(' AND ');
  let equal = 0;
  for (const term of terms) {
    if (!/^[^=<>()\s]+=\?$/.test(term)) break;
    equal++;
  }
  return equal;
}

/**
 * A decision kept per connection: a bounded one while the database does not
 * change; a refusal while the schema stands, asked again now and then.
 */
interface Decision {
  readonly version: string;
  readonly schema: string;
  readonly bounded: boolean;
  /** Times a refusal was reused since the data moved. */
  reused: number;
}

/**
 * A refusal is decided again only on every this many asks after the data
 * moved. A refused read runs in an engine process, under the timeout, so a
 * refusal kept too long costs only the hop there; deciding it again costs
 * 330 µs (it is weighed twice), and a class writes every few statements.
 */
const REFUSAL_REUSES = 16;

const DECISIONS_PER_CONNECTION = 256;
interface Planner {
  readonly stats: PlanStats;
  readonly decisions: Map<string, Decision>;
  readonly shapes: Map<string, { version: string; shape: PlannedShape | null }>;
}

const planners = new WeakMap<Connection, Planner>();

function plannerOf(connection: Connection): Planner {
  let planner = planners.get(connection);
  if (planner === undefined) {
    planner = { stats: new PlanStats(connection.db, ROW_BUDGET), decisions: new Map(), shapes: new Map() };
    planners.set(connection, planner);
  }
  return planner;
}

/** The facts the planner keeps of a connection's database (shared with bounded-row-page.ts, so each is gathered once). */
export function planStatsOf(connection: Connection): PlanStats {
  return plannerOf(connection).stats;
}

/** Bytes of the longest parameter value (a value the request brings). */
function longestParameter(statement: ExecStatement): number {
  const params = statement.params;
  if (params === undefined || params === null) return 0;
  const values = Array.isArray(params) ? params : Object.values(params as Record<string, unknown>);
  let longest = 0;
  for (const value of values) {
    if (typeof value === 'string') longest = Math.max(longest, value.length * 3);
    else if (value !== null && typeof value === 'object') longest = Math.max(longest, JSON.stringify(value).length);
  }
  return longest;
}

/**
 * Whether `sql` (the text as it will run) is bounded on this connection's
 * database. Must run inside the read transaction that will run it, so that
 * the plan and the sizes are the ones it will meet.
 */
export function isPlannedBoundedOn(
  connection: Connection,
  statement: ExecStatement,
  sql: string,
  facts: TextFacts,
): boolean {
  const planner = plannerOf(connection);
  const version = planner.stats.sync();
  const key = sql;
  const known = planner.decisions.get(key);
  if (known !== undefined && known.version === version.data)
    return known.bounded && withinBytes(planner, key, statement, facts);
  if (known !== undefined && !known.bounded && known.schema === version.schema && ++known.reused < REFUSAL_REUSES)
    return false;
  // The plan is read again only when the schema changed; the data's facts, whenever the data did.
  let shape = planner.shapes.get(key);
  if (shape === undefined || shape.version !== version.schema) {
    shape = { version: version.schema, shape: shapeOrNull(connection, planner.stats, sql, facts) };
    remember(planner.shapes, key, shape);
  }
  let bounded = false;
  try {
    bounded = shape.shape !== null && decide(planner.stats, shape.shape, key, planner);
  } catch {
    // NotBounded: a table over the budget, a database too big.
  }
  remember(planner.decisions, key, { version: version.data, schema: version.schema, bounded, reused: 0 });
  return bounded && withinBytes(planner, key, statement, facts);
}

/** The most rows a statement found bounded by isPlannedBoundedOn may visit (so return); undefined when not known. */
export function plannedVisits(connection: Connection, sql: string): number | undefined {
  return weights.get(plannerOf(connection).decisions)?.get(sql)?.visits;
}

/** Keeps `value` under `key` as the most recent entry of a map bounded like the decisions. */
function remember<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > DECISIONS_PER_CONNECTION) map.delete(map.keys().next().value as string);
}

/** Visits and bytes per visit of a decided statement, before the parameters' own sizes are counted. */
const weights = new WeakMap<Map<string, Decision>, Map<string, Weight>>();

function withinBytes(
  planner: { decisions: Map<string, Decision> },
  key: string,
  statement: ExecStatement,
  facts: TextFacts,
): boolean {
  const weight = weights.get(planner.decisions)?.get(key);
  if (weight === undefined) return false;
  const valueBytes = Math.max(weight.rowBytes, facts.longestLiteral, longestParameter(statement));
  return weight.visits * valueBytes * weight.growth <= BYTE_BUDGET;
}

/** What a statement's plan and bytecode say: fixed while the schema is (plans do not follow the data without sqlite_stat4). */
interface PlannedShape {
  readonly code: CodeFacts;
  readonly plan: PlanNode[];
  readonly probes: number;
  readonly aliases: ReadonlyMap<string, readonly string[]>;
  readonly literalRows: number;
  readonly facts: TextFacts & { viewPatterns: boolean };
}

function shapeOf(connection: Connection, stats: PlanStats, sql: string, facts: TextFacts): PlannedShape | undefined {
  if (stats.namesMislead(misleads)) refuse('a name in the schema could be misread in a plan line');
  // With sqlite_stat4 SQLite may plan a statement again for the values bound to it: the plan read here would not be the one run.
  if (stats.table('sqlite_stat4') !== undefined) refuse('plans may change with bound values');
  // Preparing copies a view's code wherever it is read, and a view read by a view multiplies it: bounded before anything is prepared.
  // With no view reading a view, a statement reads exactly the views its text names.
  const views = stats.viewTextLength(facts.names);
  if (views > 0 && (stats.viewsNest(viewsNest) || facts.tokens * views > MAX_VIEW_EXPANSION))
    refuse('views could expand too far');
  const prepared = connection.prepare(sql);
  if (!prepared.reader || !prepared.readonly) return undefined;
  const code = readCode(connection.db, sql, stats, facts.placeholders);
  for (const table of code.tables) {
    if (table !== 'sqlite_schema' && connection.schema.hasGeneratedColumns(table))
      refuse(`generated columns in ${table}`);
  }
  if (code.growthSteps > MAX_GROWTH_STEPS) refuse('values may grow too much');
  const plan = readPlan(connection.db, sql, facts.placeholders);
  return {
    code,
    plan,
    probes: planProbes(plan, facts, stats),
    aliases: aliasesWithViews(facts, stats),
    literalRows: facts.tokens + views,
    facts: { ...facts, viewPatterns: stats.viewTexts(facts.names).some((text) => /\b(LIKE|GLOB)\b/i.test(text)) },
  };
}

/** The statement's shape, or null when the schema alone rules it out (or SQLite will not prepare it: the engine processes give its error, as they always did). */
function shapeOrNull(connection: Connection, stats: PlanStats, sql: string, facts: TextFacts): PlannedShape | null {
  try {
    return shapeOf(connection, stats, sql, facts) ?? null;
  } catch {
    return null;
  }
}

function decide(
  stats: PlanStats,
  shape: PlannedShape,
  key: string,
  planner: { decisions: Map<string, Decision> },
): boolean {
  if (stats.fileBytes() > MAX_FILE_BYTES) refuse('database too big to gather its facts cheaply');
  const { code, plan, probes, aliases, literalRows, facts } = shape;
  // First with every index search counted as its whole table (no query per index), then, only if
  // that is over a budget, with the largest group of each searched key (a scan of the index each).
  const rough = weigh(new PlanBound(stats, code, probes, aliases, false, literalRows), plan, code, stats, facts);
  const weight =
    rough !== undefined && within(rough, facts)
      ? rough
      : weigh(new PlanBound(stats, code, probes, aliases, true, literalRows), plan, code, stats, facts);
  if (weight === undefined) return false;
  let table = weights.get(planner.decisions);
  if (table === undefined) {
    table = new Map();
    weights.set(planner.decisions, table);
  }
  table.delete(key);
  table.set(key, weight);
  if (table.size > DECISIONS_PER_CONNECTION) table.delete(table.keys().next().value as string);
  return within(weight, facts);
}

interface Weight {
  readonly visits: number;
  readonly rowBytes: number;
  readonly growth: number;
}

function within(weight: Weight, facts: TextFacts): boolean {
  return weight.visits * Math.max(weight.rowBytes, facts.longestLiteral) * weight.growth <= BYTE_BUDGET;
}

/** Row visits and bytes per visit of a plan; undefined when over the row or call budget. */
function weigh(
  bound: PlanBound,
  plan: PlanNode[],
  code: CodeFacts,
  stats: PlanStats,
  facts: TextFacts & { viewPatterns: boolean },
): Weight | undefined {
  // A loop named by an alias may be a subquery's result: passes until the largest result stops growing.
  let sources = 0;
  let visits = 0;
  for (let pass = 0; ; pass++) {
    const result = bound.visits(plan, sources);
    visits = result.visits;
    if (visits > ROW_BUDGET) return undefined;
    if (result.sources <= sources) break;
    if (pass >= 4) return undefined;
    sources = result.sources;
  }
  if (visits * code.scriptCalls > SCRIPT_CALL_BUDGET) return undefined;
  let rowBytes = 0;
  for (const table of code.tables) rowBytes = Math.max(rowBytes, stats.largestRow(table));
  let growth = 2 ** code.growthSteps;
  if (code.perRow) growth *= Math.max(visits, 1);
  // A pattern the text did not bring (a view's, whose pattern may be a column) may cost the text times the pattern.
  if (code.patterns > facts.patterns || (code.patterns > 0 && facts.viewPatterns) || code.quadratic)
    growth *= Math.max(rowBytes, facts.longestLiteral, 1);
  // A literal pattern with few wildcards costs about what upper() costs per byte (measured), so twice as a margin.
  else if (code.patterns > 0) growth *= 2;
  return { visits, rowBytes, growth };
}

/** The statement's alias sources, and those of the views it names (a view reads what its own text names). */
function aliasesWithViews(facts: TextFacts, stats: PlanStats): ReadonlyMap<string, readonly string[]> {
  const texts = stats.viewTexts(facts.names);
  if (texts.length === 0) return facts.aliases;
  const merged = new Map<string, string[]>();
  for (const map of [facts.aliases, ...texts.map((text) => aliasSources(tokenize(text)))]) {
    for (const [name, sources] of map) merged.set(name, [...(merged.get(name) ?? []), ...sources]);
  }
  return merged;
}

/**
 * How many keys one search may probe: one, unless the statement (or a view
 * it may read) has a list (IN, OR: one probe per literal), and unbounded
 * when a list comes from a subquery (the search then counts its whole table).
 */
function planProbes(plan: readonly PlanNode[], facts: TextFacts, stats: PlanStats): number {
  const lines: string[] = [];
  const walk = (nodes: readonly PlanNode[]): void => {
    for (const node of nodes) {
      lines.push(node.detail);
      walk(node.children);
    }
  };
  walk(plan);
  if (lines.some((line) => line.includes('LIST SUBQUERY'))) return Infinity;
  const views = stats.viewTextLength(facts.names);
  if (!facts.lists && views === 0) return 1;
  return facts.tokens + views;
}
