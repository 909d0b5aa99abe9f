/**
 * CPU time of the engine alone on a 100-statement INSERT batch, in this
 * process: the write group call and its commit, without the server, the
 * journal or the channel to an engine process (a development aid: it holds
 * still on a busy machine where cpu-cost.mjs does not).
 *
 *   node test/bench/engine-batch.mjs [requests]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ROOT } from './processes.mjs';

const require = createRequire(import.meta.url);
const { Engine } = require(path.join(ROOT, 'dist/src/engine/engine.js'));
const requests = Number(process.argv[2] ?? 2000);
const INSERT = 'INSERT INTO log (name, qty) VALUES (?, ?)';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlscribe-engine-batch-'));
const file = path.join(dir, 'bench.db');
const engine = new Engine({ syncCommits: false });
try {
  engine.createDatabase(file, 1);
  engine.execHeld({
    file,
    statements: [
      { sql: 'CREATE TABLE log (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER) STRICT', kind: 'create-table' },
    ],
    maxResultRows: 100,
  });
  engine.commitHeld(2);
  const batch = () => ({
    file,
    statements: Array.from({ length: 100 }, (_, i) => ({ sql: INSERT, kind: 'insert', params: ['a name', i] })),
    maxResultRows: 1000,
    jsonRows: true,
  });
  let seq = 3;
  const run = (count) => {
    for (let i = 0; i < count; i++) {
      engine.execHeldGroup([batch()]);
      engine.commitHeld(seq++);
    }
  };
  run(300);
  const since = process.cpuUsage();
  run(requests);
  const used = process.cpuUsage(since);
  console.log(
    `engine, 100-statement INSERT batch: ${((used.user + used.system) / requests).toFixed(0)} µs CPU per request (${requests} requests)`,
  );
} finally {
  engine.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
