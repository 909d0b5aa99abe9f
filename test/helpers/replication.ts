/**
 * What the replication tests share: a primary and its replicas on their own
 * directories, a write load that remembers which writes were acknowledged,
 * and the checks that two servers hold the same data.
 */
import fs from 'node:fs';
import path from 'node:path';
import { scratchDir } from './scratch-dir';
import { ServerFleet, type ServerPlace } from './server-fleet';
import type { Reply, TestServer } from './server';

/** A server's own directory under `root`, with its data and journal inside. */
export function placeIn(root: string, name: string): ServerPlace {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  return { dir, data: path.join(dir, 'data'), journal: path.join(dir, 'journal', 'statements.jsonl') };
}

export async function ok(reply: Promise<Reply>, what: string): Promise<Reply> {
  const answered = await reply;
  if (answered.status !== 200 && answered.status !== 201)
    throw new Error(`${what}: ${answered.status} ${answered.text.slice(0, 500)}`);
  return answered;
}

/** The journal seq the server says its databases hold (X-Journal-Seq). */
export function journalSeqOf(reply: Reply): number {
  return Number(reply.headers.get('x-journal-seq') ?? NaN);
}

/** Creates `db` with a table `marks (id INT PRIMARY KEY, client INT, n INT)`; gives the seq after it. */
export async function createMarks(primary: TestServer, db: string): Promise<number> {
  await ok(primary.post('/dbs', { db }), `create ${db}`);
  return journalSeqOf(
    await ok(primary.exec(db, 'CREATE TABLE marks (id INT PRIMARY KEY, client INT, n INT)'), 'create table'),
  );
}

export interface LoadResult {
  /** The ids of the rows whose INSERT was answered 200: acknowledged writes. */
  acked: Set<number>;
  /** How many INSERTs were answered with something else, or not at all. */
  failed: number;
  /** The highest X-Journal-Seq the primary answered. */
  lastSeq: number;
}

export interface LoadOptions {
  clients: number;
  perClient: number;
  /** Ids start here (so that two loads on one table do not collide). @default 0 */
  firstId?: number;
  /** Told after every answered write; the load stops early once it returns true. */
  stopWhen?: (done: number) => boolean;
}

/**
 * `clients` clients each INSERT `perClient` rows, one request each, at the
 * same time. A connection error (the primary was killed) counts as failed
 * and ends that client.
 */
export async function writeLoad(primary: TestServer, db: string, options: LoadOptions): Promise<LoadResult> {
  const result: LoadResult = { acked: new Set(), failed: 0, lastSeq: 0 };
  let done = 0;
  const client = async (c: number): Promise<void> => {
    for (let i = 0; i < options.perClient; i++) {
      if (options.stopWhen?.(done) === true) return;
      const id = (options.firstId ?? 0) + c * options.perClient + i;
      let reply: Reply;
      try {
        reply = await primary.exec(db, 'INSERT INTO marks (id, client, n) VALUES (?, ?, ?)', { params: [id, c, i] });
      } catch {
        result.failed += options.perClient - i;
        return;
      }
      done++;
      if (reply.status === 200) {
        result.acked.add(id);
        result.lastSeq = Math.max(result.lastSeq, journalSeqOf(reply));
      } else {
        result.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
  return result;
}

/** Every row of `marks`, in id order, read with X-Min-Seq so that a replica answers only once it has `minSeq`. */
export async function marksOf(server: TestServer, db: string, minSeq = 0): Promise<Array<[number, number, number]>> {
  const reply = await server.request('POST', '/exec', {
    body: { db, sql: 'SELECT id, client, n FROM marks ORDER BY id' },
    headers: { 'X-Min-Seq': String(minSeq) },
  });
  if (reply.status !== 200)
    throw new Error(`reading marks from ${server.url}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return (reply.body.results[0].rows as Array<Record<string, number> | number[]>).map((row) =>
    Array.isArray(row) ? (row as [number, number, number]) : [row.id as number, row.client as number, row.n as number],
  );
}

/** The seqs of the entries in a journal's files (rotated ones included), in file order. */
export function journalSeqs(journal: string): number[] {
  const dir = path.dirname(journal);
  const files = fs
    .readdirSync(dir)
    .filter((name) => name.startsWith(path.basename(journal).replace(/\.jsonl$/, '')))
    .sort();
  const seqs: number[] = [];
  for (const file of files) {
    if (file.endsWith('.gz')) continue;
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      const match = /^\{"seq":(\d+),/.exec(line);
      if (match !== null) seqs.push(Number(match[1]));
    }
  }
  return seqs.sort((a, b) => a - b);
}

/** The entry lines of a journal's active file (headers left out): a replica's must equal its primary's. */
export function entryLines(journal: string): string[] {
  return fs
    .readFileSync(journal, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"seq":'));
}

interface HasTeardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** A test's scratch directory and servers, and the two ways a server joins a stream. */
export class Stage {
  readonly root: string;
  readonly fleet: ServerFleet;

  constructor(tt: HasTeardown) {
    this.root = scratchDir(tt);
    this.fleet = new ServerFleet(tt);
  }

  place(name: string): ServerPlace {
    return placeIn(this.root, name);
  }

  /** A primary shipping to `nats` as node `node`. */
  primary(where: ServerPlace, nats: string, node = 'p1', extra: string[] = []): Promise<TestServer> {
    return this.fleet.start(where, ['-journal-nats', nats, '-node', node, ...extra]);
  }

  /** A replica following `nats` as node `node`. */
  replica(where: ServerPlace, nats: string, node = 'r1', extra: string[] = []): Promise<TestServer> {
    return this.fleet.start(where, ['-follow', nats, '-node', node, ...extra]);
  }
}

/** A LoadOptions.stopWhen that calls `kill` once, when `after` writes were answered; `fired` says whether it did. */
export function killAfter(
  after: number,
  kill: () => unknown,
): { stopWhen: (done: number) => boolean; readonly fired: boolean } {
  let fired = false;
  return {
    stopWhen: (done) => {
      if (done >= after && !fired) {
        fired = true;
        void kill();
      }
      return false;
    },
    get fired() {
      return fired;
    },
  };
}
