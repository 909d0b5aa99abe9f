/**
 * Counters, histograms and gauges counted in plain fields, handed to
 * prom-client only when /metrics is read. prom-client hashes and checks a
 * metric's labels on every increment, even through a child found once; the
 * request path counts five figures per request, so each costs a field update
 * here instead. And prom-client itself (with the OpenTelemetry API it loads)
 * costs a server about 30 ms of CPU and 4 MB at start: with every figure
 * kept here, it is loaded at the first Prometheus scrape, or never. The text
 * prom-client writes for these is the same as for its own Counter, Histogram
 * and Gauge of the same name, help, labels and buckets.
 */
import type client from 'prom-client';

/** prom-client's default histogram buckets, in seconds. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels = Record<string, string>;

interface MetricValue {
  labels: Labels;
  value: number;
  metricName?: string;
}

interface Collected {
  name: string;
  help: string;
  type: 'counter' | 'histogram' | 'gauge';
  values: MetricValue[];
  aggregator: 'sum';
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  const labels: Labels = {};
  names.forEach((name, i) => (labels[name] = values[i] ?? ''));
  return labels;
}

/** One labelled series of a counter. */
export class CounterSeries {
  value = 0;

  constructor(readonly labels: Labels) {}

  inc(by = 1): void {
    this.value += by;
  }
}

/** A counter; its series are made on first use and kept (their label values are bounded by the caller). */
export class TallyCounter {
  readonly type = 'counter';
  private readonly series = new Map<string, CounterSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[] = [],
  ) {}

  /** The series of these label values (in labelNames' order). */
  labels(...values: string[]): CounterSeries {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      series = new CounterSeries(labelsOf(this.labelNames, values));
      this.series.set(key, series);
    }
    return series;
  }

  get(): Collected {
    // An unlabelled counter shows 0 before its first increment, as prom-client's does.
    if (this.labelNames.length === 0) this.labels();
    return {
      name: this.name,
      help: this.help,
      type: 'counter',
      values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })),
      aggregator: 'sum',
    };
  }

  registerIn(registry: client.Registry): this {
    registry.registerMetric(this as unknown as client.Metric);
    return this;
  }
}

/** One labelled series of a histogram: counts per bucket (not yet cumulative), their sum and count. */
export class HistogramSeries {
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= (this.bounds[i] as number)) {
        this.counts[i] = (this.counts[i] as number) + 1;
        return;
      }
    }
  }

  /** The series as prom-client writes a histogram's: cumulative buckets with `le` first, then _sum and _count. */
  values(name: string): MetricValue[] {
    const values: MetricValue[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += this.counts[i] as number;
      values.push({ labels: { le: String(bound), ...this.labels }, value: cumulative, metricName: `${name}_bucket` });
    });
    values.push({ labels: { le: '+Inf', ...this.labels }, value: this.count, metricName: `${name}_bucket` });
    values.push({ labels: this.labels, value: this.sum, metricName: `${name}_sum` });
    values.push({ labels: this.labels, value: this.count, metricName: `${name}_count` });
    return values;
  }
}

export class TallyHistogram {
  readonly type = 'histogram';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[] = [],
    private readonly buckets: readonly number[] = DEFAULT_BUCKETS,
  ) {}

  labels(...values: string[]): HistogramSeries {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      series = new HistogramSeries(labelsOf(this.labelNames, values), this.buckets);
      this.series.set(key, series);
    }
    return series;
  }

  get(): Collected {
    if (this.labelNames.length === 0) this.labels();
    return {
      name: this.name,
      help: this.help,
      type: 'histogram',
      values: [...this.series.values()].flatMap((s) => s.values(this.name)),
      aggregator: 'sum',
    };
  }

  registerIn(registry: client.Registry): this {
    registry.registerMetric(this as unknown as client.Metric);
    return this;
  }
}

/** An unlabelled gauge: the last value set. */
export class TallyGauge {
  readonly type = 'gauge';
  value = 0;

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  set(value: number): void {
    this.value = value;
  }

  get(): Collected {
    return {
      name: this.name,
      help: this.help,
      type: 'gauge',
      values: [{ labels: {}, value: this.value }],
      aggregator: 'sum',
    };
  }

  registerIn(registry: client.Registry): this {
    registry.registerMetric(this as unknown as client.Metric);
    return this;
  }
}
