/**
 * The processes of the benchmark: starting sqlscribe and the baseline on
 * 127.0.0.1, one HTTP request at a time over a keep-alive connection, and the
 * resident memory of a process tree (from /proc).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MAIN = path.join(ROOT, 'dist/src/main.js');
const SHEBANG = fs.readFileSync(MAIN, 'utf8').split('\n')[0];
/** The node flags the server is deployed with: those on main.js's #! line (npm start and the systemd unit use the same). */
const SERVER_NODE_FLAGS = (/^#!.*\bnode((?: --\S+)*)\s*$/.exec(SHEBANG)?.[1] ?? '').split(' ').filter(Boolean);
/** And the environment it sets before node (`env -S NAME=value … node`). */
const SERVER_ENVIRONMENT = Object.fromEntries(
  (/^#!\S*env -S((?: \w+=\S+)*) node\b/.exec(SHEBANG)?.[1] ?? '')
    .split(' ')
    .filter(Boolean)
    .map((assignment) => assignment.split('=', 2)),
);
export const BASELINE = path.join(ROOT, 'test/bench/baseline-server.mjs');
export const TOKEN = 'bench-token-0123456789';

/**
 * Spawns `node args…` and resolves once stderr has matched every pattern, with
 * the time (ms since spawn) each matched and the first capture of the first.
 */
export function startProcess(args, patterns, { timeoutMs = 60_000, cwd = ROOT, env = process.env } = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    const times = new Array(patterns.length).fill(undefined);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start: ${err}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk) => {
      err += chunk.toString();
      patterns.forEach((pattern, i) => {
        if (times[i] === undefined && pattern.test(err)) times[i] = performance.now() - started;
      });
      if (times.every((t) => t !== undefined)) {
        clearTimeout(timer);
        const url = patterns[0].exec(err)?.[1];
        resolve({ child, url, times, stderr: () => err, stop: () => stopProcess(child) });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}: ${err}`));
    });
  });
}

export function stopProcess(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => (clearTimeout(timer), resolve(code)));
    child.kill('SIGTERM');
  });
}

/** sqlscribe as the benchmark runs it: multi-DB, token on, journal at level mod. */
export function startSqlscribe(dir, extra = []) {
  // BENCH_NODE_FLAGS (e.g. --cpu-prof) lets a developer profile the server under the benchmark's load.
  const flags = process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : [];
  const args = [
    ...SERVER_NODE_FLAGS,
    ...flags,
    MAIN,
    '-dir',
    dir,
    '-addr',
    '127.0.0.1:0',
    '-token',
    TOKEN,
    '-log-file',
    path.join(dir, 'journal', 'statements.jsonl'),
    '-log-level',
    'mod',
    ...extra,
  ];
  return startProcess(args, [/listening on (http:\/\/\S+)/, /\nsqlscribe ready/], {
    env: { ...process.env, ...SERVER_ENVIRONMENT },
  });
}

/** The bare baseline: node:http, or with `koa` bare Koa and koa-bodyparser (baseline-server.mjs). */
export function startBaseline(dir, boolColumns, { koa = false } = {}) {
  return startProcess([BASELINE, ...(koa ? ['--koa'] : []), dir, ...boolColumns], [/listening on (http:\/\/\S+)/]);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request on `agent`'s keep-alive connections: JSON (`json`) or raw bytes (`raw`, of `type`) as the body; resolves with the status, the body's text and the latency. */
export function send(agent, url, method, pathAndQuery, { token = TOKEN, json, raw, type } = {}) {
  const target = new URL(pathAndQuery, url);
  const payload =
    raw !== undefined ? Buffer.from(raw) : json !== undefined ? Buffer.from(JSON.stringify(json)) : undefined;
  const headers = {
    'x-service-token': token,
    ...(payload ? { 'content-type': type ?? 'application/json', 'content-length': payload.length } : {}),
  };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method, agent, headers },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            text: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.setTimeout(120_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** One request on this module's connection; resolves with status, parsed body and the latency in ms. */
export async function request(url, method, pathAndQuery, body) {
  const { status, text, ms } = await send(agent, url, method, pathAndQuery, body === undefined ? {} : { json: body });
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status, body: parsed, ms };
}

/** Like request, but a status other than 2xx is an error. */
export async function ok(url, method, pathAndQuery, body) {
  const reply = await request(url, method, pathAndQuery, body);
  if (reply.status < 200 || reply.status > 299)
    throw new Error(`${method} ${pathAndQuery}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
  return reply;
}

function children(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function statusField(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The pids of a process and of its children (sqlscribe's engine processes). */
export function processTree(pid) {
  return [pid, ...children(pid)];
}

const TICK_MS = 1000 / 100; // USER_HZ

function statFields(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').map(Number);
  } catch {
    return [];
  }
}

/** CPU ms (user and system) used so far by one process; 0 once it is gone. */
export function processCpuMs(pid) {
  const fields = statFields(pid);
  return ((fields[11] ?? 0) + (fields[12] ?? 0)) * TICK_MS;
}

/**
 * CPU ms used so far by a process and its children, those that exited
 * included (an engine process replaced during a run still counts): user and
 * system time of each living process, plus what the root has reaped.
 */
export function treeCpuMs(pid) {
  const [root, ...rest] = processTree(pid);
  const own = (fields) => (fields[11] ?? 0) + (fields[12] ?? 0);
  const rootFields = statFields(root);
  const reaped = (rootFields[13] ?? 0) + (rootFields[14] ?? 0);
  return (own(rootFields) + reaped + rest.reduce((sum, child) => sum + own(statFields(child)), 0)) * TICK_MS;
}

/**
 * Proportional set size: resident memory with each shared page (the node
 * binary, mapped by every process of the tree) divided among the processes
 * sharing it, so that a sum over processes counts each page once.
 */
function pss(pid) {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the summed RSS and PSS of a process tree every `everyMs` until stopped; gives the peaks. */
export function rssSampler(pid, everyMs = 100) {
  let peak = 0;
  let peakPss = 0;
  const sample = () => {
    const pids = processTree(pid);
    peak = Math.max(
      peak,
      pids.reduce((total, p) => total + statusField(p, 'VmRSS'), 0),
    );
    peakPss = Math.max(
      peakPss,
      pids.reduce((total, p) => total + pss(p), 0),
    );
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const hwm = processTree(pid).map((p) => ({ pid: p, peakRss: statusField(p, 'VmHWM') }));
      return { peakSum: peak, peakPss, perProcess: hwm };
    },
  };
}
