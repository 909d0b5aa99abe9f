/**
 * Each database handle's page cache is bounded (ConnectionOptions.pageCacheKiB):
 * 512 KiB in the server and its engine processes, which hold a handle on
 * every database a class uses; SQLite's own 2,000 KiB in a replay's rebuild.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Connection } from '../src/engine/connection-pool';
import { Engine } from '../src/engine/engine';
import { REBUILD_PAGE_CACHE_KIB } from '../replay/rebuild';

function makeFile(dir: string): string {
  const file = path.join(dir, 'cache.db');
  new Database(file).close();
  return file;
}

const cacheSize = (connection: Connection): unknown => connection.db.pragma('cache_size', { simple: true });

t.test('a handle caches at most 512 KiB of pages unless told otherwise', async (t) => {
  const file = makeFile(t.testdir());
  const server = new Connection(file);
  const rebuild = new Connection(file, { pageCacheKiB: REBUILD_PAGE_CACHE_KIB });
  t.teardown(() => (server.close(), rebuild.close()));
  t.equal(cacheSize(server), -512n);
  t.equal(cacheSize(rebuild), -2000n);
});

t.test("an engine's handles take its page cache size", async (t) => {
  const file = makeFile(t.testdir());
  const plain = new Engine();
  const rebuilding = new Engine({ syncCommits: false, pageCacheKiB: REBUILD_PAGE_CACHE_KIB });
  t.teardown(() => (plain.close(), rebuilding.close()));
  t.equal(cacheSize(plain['pool'].get(file)), -512n);
  t.equal(cacheSize(rebuilding['pool'].get(file)), -2000n);
});
