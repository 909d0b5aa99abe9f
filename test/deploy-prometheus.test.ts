/**
 * deploy/prometheus: promtool accepts the scrape configuration and the alert
 * rules, and the rules' own test (sqlscribe-rules.test.yml) passes: a burst of
 * class-9 failures fires its alert, a quiet series does not. Then a real
 * server (a replication primary, so its replica gauges exist) is scraped the
 * way prometheus.yml says, with an admin token from a tokens file as the
 * bearer, and every sqlscribe_ series a rule names must be in what it serves:
 * a rule on a metric that does not exist never fires.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { startServer } from './helpers/server';
import { scratchDir } from './helpers/scratch-dir';
import { startNats } from './helpers/nats-server';
import { ROOT, missingTool, writeAdminTokensFile } from './helpers/deploy-files';

t.setTimeout(120_000);

const DIR = path.join(ROOT, 'deploy/prometheus');
const TOKEN_FILE = '/etc/prometheus/sqlscribe.token';

function promtool(tt: Test, args: string[]): void {
  const missing = missingTool('promtool', 'prometheus');
  if (missing !== undefined) return void tt.fail(missing);
  const run = spawnSync('promtool', args, { encoding: 'utf8', cwd: DIR });
  tt.equal(run.status, 0, `promtool ${args.join(' ')}: ${run.stdout}${run.stderr}`);
}

t.test('promtool check config accepts prometheus.yml (its credentials file made to exist)', async (tt) => {
  // promtool checks that the credentials file is there: the copy names one in a scratch directory.
  const scratch = scratchDir(tt);
  const config = fs.readFileSync(path.join(DIR, 'prometheus.yml'), 'utf8');
  tt.ok(config.includes(TOKEN_FILE), `the configuration reads the token from ${TOKEN_FILE}`);
  fs.writeFileSync(path.join(scratch, 'sqlscribe.token'), 'secret\n');
  fs.writeFileSync(
    path.join(scratch, 'prometheus.yml'),
    config.replace(TOKEN_FILE, path.join(scratch, 'sqlscribe.token')),
  );
  fs.copyFileSync(path.join(DIR, 'sqlscribe-rules.yml'), path.join(scratch, 'sqlscribe-rules.yml'));
  promtool(tt, ['check', 'config', path.join(scratch, 'prometheus.yml')]);
});

t.test('promtool check rules accepts sqlscribe-rules.yml', async (tt) => {
  promtool(tt, ['check', 'rules', 'sqlscribe-rules.yml']);
});

t.test('promtool test rules: class-9 bursts fire, quiet series do not', async (tt) => {
  promtool(tt, ['test', 'rules', 'sqlscribe-rules.test.yml']);
});

t.test('every sqlscribe_ series the rules use is served by /metrics?format=prometheus', async (tt) => {
  const rules = fs.readFileSync(path.join(DIR, 'sqlscribe-rules.yml'), 'utf8');
  const used = new Set([...rules.matchAll(/\b(sqlscribe_[a-z0-9_]+)/g)].map((match) => match[1] as string));
  tt.ok(used.size >= 7, `the rules use ${[...used].join(', ')}`);
  const scratch = scratchDir(tt);
  const nats = await startNats(tt);
  const tokens = path.join(scratch, 'tokens.json');
  const secret = writeAdminTokensFile(tokens, 'prometheus');
  const server = await startServer(
    ['-dir', path.join(scratch, 'data'), '-tokens-file', tokens, '-journal-nats', nats.url],
    { cwd: scratch },
  );
  tt.teardown(() => server.stop());
  // As prometheus.yml scrapes: the path, ?format=prometheus, the admin token as the bearer.
  const scrape = await server.get('/metrics?format=prometheus', { authorization: `Bearer ${secret}` });
  tt.equal(scrape.status, 200);
  tt.equal((await server.get('/metrics?format=prometheus')).status, 401, 'and not without it');
  const served = new Set(
    [...scrape.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
      type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name as string],
    ),
  );
  for (const name of used) tt.ok(served.has(name), `${name} is served`);
  const missing = missingTool('promtool', 'prometheus');
  if (missing !== undefined) return void tt.fail(missing);
  // It parses; the linter's only complaints are about prom-client's default Node.js gauges
  // (sqlscribe_nodejs_active_*_total, gauges named like counters), none about sqlscribe's own series.
  const check = spawnSync('promtool', ['check', 'metrics'], { input: scrape.text, encoding: 'utf8' });
  tt.notMatch(check.stderr, /parsing error/, 'the text parses');
  const complaints = `${check.stdout}${check.stderr}`.split('\n').filter((line) => line.trim() !== '');
  tt.same(
    complaints.filter((line) => !line.startsWith('sqlscribe_nodejs_')),
    [],
    'no lint complaint about our own series',
  );
});
