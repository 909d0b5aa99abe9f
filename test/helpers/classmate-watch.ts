/**
 * A classmate who keeps working while something heavy runs on the server (a
 * restore's rebuild): their reads are timed and checked, and the server's
 * resident memory is sampled beside, so that a test can say the heavy work
 * ran off the server's thread and within its memory.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { TestServer } from './server';
import { sleep } from './wait';

export interface Watch {
  latencies: number[];
  wrong: string[];
  peakRssKb: number;
}

/** The resident memory of process `pid` in KiB (VmRSS in /proc). */
export function rssKb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/**
 * The test's own process and the server it watches go before the rest of the
 * machine on the CPU while a watch runs (the suite runs other test files
 * beside this one on two cores): what the watch measures is whether the
 * server's thread waits for the rebuild, not how busy the machine is. The
 * rebuild keeps its own lower priority (restore-process.ts sets it), so it
 * still competes as it does in production. Without the right to raise a
 * priority (not root), the watch runs as it is.
 */
function ahead(pids: readonly number[]): () => void {
  const before = pids.map((pid) => os.getPriority(pid));
  try {
    for (const pid of pids) os.setPriority(pid, -5);
  } catch {
    return () => undefined;
  }
  return () =>
    pids.forEach((pid, at) => {
      try {
        os.setPriority(pid, before[at] ?? 0);
      } catch {
        // The server may have ended meanwhile: nothing is left to give back.
      }
    });
}

/**
 * A classmate reading their own database (`classmate`, rows 1 'a' and 2 'b')
 * and /health one after another until `done` settles, each answer timed and
 * checked, sent with `headers`; the server's RSS sampled every 50 ms beside.
 */
export async function classmate(
  server: TestServer,
  done: Promise<unknown>,
  headers: Record<string, string> = {},
): Promise<Watch> {
  const watch: Watch = { latencies: [], wrong: [], peakRssKb: 0 };
  let over = false;
  // `done` is awaited by the caller too; its rejection is reported there.
  void done.finally(() => (over = true)).catch(() => undefined);
  const pid = server.child.pid as number;
  const restorePriorities = ahead([process.pid, pid]);
  const sampler = setInterval(() => (watch.peakRssKb = Math.max(watch.peakRssKb, rssKb(pid))), 50);
  try {
    while (!over) {
      let started = performance.now();
      const health = await server.request('GET', '/health', { headers });
      watch.latencies.push(performance.now() - started);
      if (health.status !== 200) watch.wrong.push(`/health ${health.status}`);
      started = performance.now();
      const body = { db: 'classmate', sql: 'SELECT id, v FROM notes ORDER BY id' };
      const read = await server.request('POST', '/exec', { body, headers });
      watch.latencies.push(performance.now() - started);
      if (read.status !== 200 || JSON.stringify(read.body?.results?.[0]?.rows) !== '[[1,"a"],[2,"b"]]')
        watch.wrong.push(`read ${read.status} ${read.text.slice(0, 120)}`);
      await sleep(10);
    }
  } finally {
    clearInterval(sampler);
    restorePriorities();
  }
  return watch;
}

/** The 99th percentile of `latencies` (0 for none). */
export function p99(latencies: readonly number[]): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}
