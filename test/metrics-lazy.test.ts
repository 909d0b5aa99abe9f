/**
 * The server's metrics load prom-client only at the first Prometheus scrape:
 * counting requests, commands and journal writes needs none of it (it costs
 * a server about 30 ms of CPU and 4 MB at start). The text it then writes has
 * every figure counted before, Node's own figures and the uptime.
 */
import t from 'tap';
import { Metrics } from '../src/http/metrics';

const promClientLoaded = (): boolean =>
  Object.keys(require.cache).some((file) => file.includes('/node_modules/prom-client/'));

t.test('figures are counted without prom-client, which the first scrape loads', async (t) => {
  t.equal(promClientLoaded(), false, 'not loaded by the module');
  const metrics = new Metrics();
  metrics.journalOpenedAt(6);
  metrics.observe(200, 12);
  metrics.observe(503, 40);
  metrics.command('exec', 'ok', 0.002);
  metrics.written([{ kind: 'exec', ok: false, class: 3, code: 301 } as never], 420, 0.0008, 7);
  metrics.rotated();
  metrics.refused(401);
  metrics.followerCut();
  t.equal(metrics.snapshot().requests_total, 2, 'the JSON record counts');
  t.equal(promClientLoaded(), false, 'nor by counting');

  const text = await metrics.prometheus();
  t.equal(promClientLoaded(), true, 'the first scrape loads it');
  t.match(metrics.prometheusContentType, /^text\/plain; version=0\.0\.4/);
  for (const line of [
    'sqlscribe_http_requests_total{status="200"} 1',
    'sqlscribe_http_responses_total{class="5xx"} 1',
    'sqlscribe_errors_total 1',
    'sqlscribe_faults_total 0',
    'sqlscribe_http_request_duration_seconds_count 2',
    'sqlscribe_commands_total{command="exec",outcome="ok"} 1',
    'sqlscribe_journal_entries_total{kind="exec"} 1',
    'sqlscribe_journal_failed_total{class="3",code="301"} 1',
    'sqlscribe_journal_bytes_total 420',
    'sqlscribe_journal_rotations_total 1',
    'sqlscribe_journal_last_seq 7',
    'sqlscribe_journal_write_seconds_bucket{le="0.001"} 1',
    'sqlscribe_journal_followers_cut_total 1',
    'sqlscribe_refused_total{code="401"} 1',
  ])
    t.ok(text.split('\n').includes(line), line);
  t.match(text, /^sqlscribe_process_cpu_user_seconds_total \d/m, "Node's own figures");
  t.match(text, /^sqlscribe_uptime_seconds \d+$/m, 'the uptime');
  const again = await metrics.prometheus();
  t.equal(again.match(/^# TYPE sqlscribe_journal_last_seq /gm)?.length, 1, 'a second scrape, each figure once');
});

t.test('two first scrapes at once make one registry', async (t) => {
  const metrics = new Metrics();
  const [first, second] = await Promise.all([metrics.prometheus(), metrics.prometheus()]);
  t.match(first, /^# TYPE sqlscribe_http_requests_total counter$/m);
  t.match(second, /^# TYPE sqlscribe_http_requests_total counter$/m);
});
