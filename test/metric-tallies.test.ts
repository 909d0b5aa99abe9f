/**
 * The tallies the request path counts in (src/http/metric-tallies.ts) read
 * on /metrics exactly as prom-client's own counters, histograms and gauges of
 * the same names, labels and observations would; and prom-client is loaded
 * only when the Prometheus text is first asked for.
 */
import client from 'prom-client';
import t from 'tap';
import { TallyCounter, TallyGauge, TallyHistogram } from '../src/http/metric-tallies';

const OBSERVED = [0.0001, 0.004, 0.005, 0.02, 0.3, 7, 12, Number.NaN];

t.test('a labelled counter and histogram, and unlabelled ones never touched', async (t) => {
  const theirs = new client.Registry();
  const ours = new client.Registry();
  const counter = new client.Counter({
    name: 'x_total',
    help: 'by command and outcome',
    labelNames: ['command', 'outcome'],
    registers: [theirs],
  });
  const histogram = new client.Histogram({
    name: 'x_seconds',
    help: 'by command',
    labelNames: ['command'],
    registers: [theirs],
  });
  new client.Counter({ name: 'y_total', help: 'never counted', registers: [theirs] });
  new client.Histogram({ name: 'y_seconds', help: 'never observed', registers: [theirs] });
  const tallyCounter = new TallyCounter('x_total', 'by command and outcome', ['command', 'outcome']).registerIn(ours);
  const tallyHistogram = new TallyHistogram('x_seconds', 'by command', ['command']).registerIn(ours);
  new TallyCounter('y_total', 'never counted').registerIn(ours);
  new TallyHistogram('y_seconds', 'never observed').registerIn(ours);
  for (const [i, seconds] of OBSERVED.entries()) {
    const command = i % 2 === 0 ? 'exec' : 'read-rows';
    counter.labels(command, i % 3 === 0 ? 'ok' : 'class1').inc();
    tallyCounter.labels(command, i % 3 === 0 ? 'ok' : 'class1').inc();
    if (Number.isFinite(seconds)) histogram.labels(command).observe(seconds);
    tallyHistogram.labels(command).observe(seconds);
  }
  t.equal(await ours.metrics(), await theirs.metrics(), 'the same Prometheus text');
});

t.test('an unlabelled counter, histogram with its own buckets and gauge, counted and set', async (t) => {
  const theirs = new client.Registry();
  const ours = new client.Registry();
  const buckets = [0.0005, 0.001, 0.01, 1];
  const counter = new client.Counter({ name: 'bytes_total', help: 'bytes', registers: [theirs] });
  const histogram = new client.Histogram({ name: 'write_seconds', help: 'writes', buckets, registers: [theirs] });
  const gauge = new client.Gauge({ name: 'last_seq', help: 'seq', registers: [theirs] });
  new client.Gauge({ name: 'never_set', help: 'a gauge never set', registers: [theirs] });
  const tallyCounter = new TallyCounter('bytes_total', 'bytes').registerIn(ours).labels();
  const tallyHistogram = new TallyHistogram('write_seconds', 'writes', [], buckets).registerIn(ours).labels();
  const tallyGauge = new TallyGauge('last_seq', 'seq').registerIn(ours);
  new TallyGauge('never_set', 'a gauge never set').registerIn(ours);
  for (const [i, seconds] of OBSERVED.entries()) {
    counter.inc(i * 100);
    tallyCounter.inc(i * 100);
    if (Number.isFinite(seconds)) histogram.observe(seconds);
    tallyHistogram.observe(seconds);
    gauge.set(i + 40);
    tallyGauge.set(i + 40);
  }
  t.equal(await ours.metrics(), await theirs.metrics(), 'the same Prometheus text');
});
