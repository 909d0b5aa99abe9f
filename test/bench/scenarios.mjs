/**
 * The throughput scenarios of issue 7, each the same request for both servers.
 */
const INSERT = 'INSERT INTO log (name, qty) VALUES (?, ?)';

export const SCENARIOS = [
  { name: 'point SELECT by key', method: 'POST', path: '/exec', body: { db: 'bench', sql: 'SELECT * FROM items WHERE id = ?', params: [4242] }, target: 0.6 },
  { name: '1,000-row page via /rows', method: 'GET', path: '/rows?db=bench&table=items&limit=1000&offset=5000', target: 0.7 },
  { name: '1,000-row page via /exec', method: 'POST', path: '/exec', body: { db: 'bench', sql: 'SELECT * FROM items WHERE id > ? ORDER BY id LIMIT 1000', params: [5000] }, target: 0.7 },
  { name: 'single-row INSERT (default: journal synced)', method: 'POST', path: '/exec', body: { db: 'bench', sql: INSERT, params: ['a name', 7] }, target: 0.5 },
  {
    name: '100-statement INSERT batch',
    method: 'POST',
    path: '/exec',
    body: { db: 'bench', statements: Array.from({ length: 100 }, (_, i) => ({ sql: INSERT, params: ['a name', i] })) },
  },
  { name: '/health', method: 'GET', path: '/health' },
];

/** p99 at 64 connections: the point SELECT again. */
export const P99_SCENARIO = { ...SCENARIOS[0], name: 'point SELECT, 64 connections' };
