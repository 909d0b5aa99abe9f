/**
 * Engine processes run with two malloc arenas (MALLOC_ARENA_MAX=2, see
 * engineEnvironment in src/engine/host/engine-child.ts) unless the
 * server was given a value of its own: read from a real engine process's
 * environment.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ProcessEngineHost } from '../src/engine/host/process-engine-host';
import { engineEnvironment } from '../src/engine/host/engine-child';
import { scratchDir } from './helpers/scratch-dir';

t.setTimeout(60_000);

/** The pids of this process's children, from /proc (every thread's list). */
function children(): number[] {
  const pids: number[] = [];
  for (const task of fs.readdirSync(`/proc/${process.pid}/task`)) {
    for (const word of fs.readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(/\s+/))
      if (word !== '') pids.push(Number(word));
  }
  return pids;
}

function environmentOf(pid: number): Map<string, string> {
  const entries = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

t.test('engineEnvironment adds two arenas and keeps everything else, an operator value included', async (t) => {
  t.same(engineEnvironment({ PATH: '/bin', TZ: 'UTC' }), { PATH: '/bin', TZ: 'UTC', MALLOC_ARENA_MAX: '2' });
  t.same(engineEnvironment({ MALLOC_ARENA_MAX: '8' }), { MALLOC_ARENA_MAX: '8' });
});

for (const [name, given, expected] of [
  ['an engine process runs with two arenas', undefined, '2'],
  ["an engine process keeps the server's own value", '4', '4'],
] as const) {
  t.test(name, async (t) => {
    const before = process.env['MALLOC_ARENA_MAX'];
    if (given === undefined) delete process.env['MALLOC_ARENA_MAX'];
    else process.env['MALLOC_ARENA_MAX'] = given;
    t.teardown(() => {
      if (before === undefined) delete process.env['MALLOC_ARENA_MAX'];
      else process.env['MALLOC_ARENA_MAX'] = before;
    });
    const known = new Set(children());
    const host = new ProcessEngineHost({ queryTimeoutMs: 10_000, minProcesses: 1, maxProcesses: 1 });
    t.teardown(() => host.close());
    await host.createDatabase(path.join(scratchDir(t), 'a.db'));
    const started = children().filter((pid) => !known.has(pid));
    t.equal(started.length, 1, 'one engine process started');
    t.equal(environmentOf(started[0] as number).get('MALLOC_ARENA_MAX'), expected);
  });
}
