/**
 * The throughput scenarios: each the same request for sqlscribe and both
 * baselines, at each of its connection counts. `targets`: the least ratio of
 * sqlscribe's req/s to bare node:http's (`node`) and to bare Koa's (`koa`),
 * and the most CPU per request above bare Koa's (`cpuOverKoaUs`).
 */
const INSERT = 'INSERT INTO log (name, qty) VALUES (?, ?)';

export const SCENARIOS = [
  {
    name: 'point SELECT by key',
    method: 'POST',
    path: '/exec',
    body: { db: 'bench', sql: 'SELECT * FROM items WHERE id = ?', params: [4242] },
    connections: [32, 64],
    targets: { node: 0.5, koa: 0.8, cpuOverKoaUs: 50 },
  },
  {
    name: '1,000-row page via /rows',
    method: 'GET',
    path: '/rows?db=bench&table=items&limit=1000&offset=5000',
    connections: [32],
    targets: { node: 0.9 },
  },
  {
    name: '1,000-row page via /exec',
    method: 'POST',
    path: '/exec',
    body: { db: 'bench', sql: 'SELECT * FROM items WHERE id > ? ORDER BY id LIMIT 1000', params: [5000] },
    connections: [32],
    targets: { node: 0.8 },
  },
  {
    name: 'single-row INSERT (journal synced)',
    method: 'POST',
    path: '/exec',
    body: { db: 'bench', sql: INSERT, params: ['a name', 7] },
    connections: [32, 64],
    targets: { node: 0.45 },
    targetsAt: 32,
  },
  {
    name: '100-statement INSERT batch',
    method: 'POST',
    path: '/exec',
    body: { db: 'bench', statements: Array.from({ length: 100 }, (_, i) => ({ sql: INSERT, params: ['a name', i] })) },
    connections: [32],
  },
  { name: '/health', method: 'GET', path: '/health', connections: [32] },
  // One row, but neither a point read nor a key range the server reads itself (an OFFSET, even 0, and a
  // 100,000-row table over the planner's budget): it runs in an engine process, so it shows what a hop costs.
  {
    name: '1-row SELECT via an engine',
    method: 'POST',
    path: '/exec',
    body: { db: 'bench', sql: 'SELECT * FROM items WHERE id > ? ORDER BY id LIMIT 1 OFFSET 0', params: [4242] },
    connections: [32],
  },
];
