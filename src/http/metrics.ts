/**
 * Operational metrics since start-up: the JSON record of the specification
 * and the same figures for Prometheus.
 */
import client from 'prom-client';
import { isServerFault } from './server-fault';
import { TallyCounter, TallyHistogram, type CounterSeries, type HistogramSeries } from './metric-tallies';
import type { CommandObserver } from '../bus/middleware/command-metrics';
import type { CommandType } from '../bus/commands';
import type { EntryOutcome, JournalObserver } from '../../journal/writer';
import type { ReplicationStatus } from '../services/server-role';

/** Size of the latency sample ring. */
export const LATENCY_SAMPLE_RING = 1024;

export interface MetricsRecord {
  ok: true;
  started_unix: number;
  uptime_s: number;
  requests_total: number;
  requests_by_status: Record<string, number>;
  /** Every response with status >= 500, 503s included (the specification's count). */
  errors_total: number;
  /** The server's own faults: the 5xx other than 503, the ones worth waking someone for. */
  faults_total: number;
  latency_ms: { p50: number; p95: number; samples: number; count: number };
  /** With -journal-nats or -follow: the role, epoch, applied seq and a replica's lag. */
  replication?: ReplicationStatus;
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return Math.round(sorted[rank] as number);
}

/** A labelled metric's child per label value, found once: prom-client hashes the labels on every call otherwise. */
class Children<T> {
  private readonly children = new Map<string, T>();

  constructor(private readonly make: (key: string) => T) {}

  get(key: string): T {
    let child = this.children.get(key);
    if (child === undefined) {
      child = this.make(key);
      this.children.set(key, child);
    }
    return child;
  }
}

export class Metrics implements CommandObserver, JournalObserver {
  private readonly startedMs = Date.now();
  private requestsTotal = 0;
  private errorsTotal = 0;
  private faultsTotal = 0;
  private readonly byStatus: Record<string, number> = {};
  private readonly ring = new Float64Array(LATENCY_SAMPLE_RING);
  private readonly registry = new client.Registry();
  // Counted on every request and command: plain tallies (metric-tallies.ts), read by prom-client when scraped.
  private readonly requestCounter: TallyCounter;
  private readonly classCounter: TallyCounter;
  private readonly errorCounter: client.Counter;
  private readonly faultCounter: client.Counter;
  private readonly latencyHistogram: HistogramSeries;
  private readonly commandCounter: TallyCounter;
  private readonly commandHistogram: TallyHistogram;
  private readonly byStatusChild: Children<CounterSeries>;
  private readonly byClassChild: Children<CounterSeries>;
  private readonly commandChild: Children<CounterSeries>;
  private readonly commandTimeChild: Children<HistogramSeries>;
  private readonly journalEntries: Children<client.Counter.Internal>;
  private readonly journalFailures: Children<client.Counter.Internal>;
  private readonly journalBytes: client.Counter;
  private readonly journalRotations: client.Counter;
  private readonly journalLastSeq: client.Gauge;
  private replication: (() => ReplicationStatus) | null = null;
  private readonly journalWriteSeconds: client.Histogram;
  private readonly followersCutCounter: client.Counter;
  private readonly refusedByCode: Children<client.Counter.Internal>;

  constructor() {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'sqlscribe_' });
    this.requestCounter = new TallyCounter('sqlscribe_http_requests_total', 'HTTP requests by status', [
      'status',
    ]).registerIn(this.registry);
    this.classCounter = new TallyCounter(
      'sqlscribe_http_responses_total',
      'HTTP responses by status class (2xx, 4xx, 5xx)',
      ['class'],
    ).registerIn(this.registry);
    // errors_total is every 5xx, as the specification defines it; a 503 is load shedding, so faults_total leaves it out for alerts on breakage.
    this.errorCounter = new client.Counter({
      name: 'sqlscribe_errors_total',
      help: 'Responses with status >= 500, 503 included',
      registers: [this.registry],
    });
    this.faultCounter = new client.Counter({
      name: 'sqlscribe_faults_total',
      help: 'Responses that were server faults: 5xx other than 503',
      registers: [this.registry],
    });
    this.latencyHistogram = new TallyHistogram('sqlscribe_http_request_duration_seconds', 'HTTP request latency')
      .registerIn(this.registry)
      .labels();
    this.commandCounter = new TallyCounter(
      'sqlscribe_commands_total',
      'Commands the bus ran, by command and outcome (ok, the error class such as class3, or fault)',
      ['command', 'outcome'],
    ).registerIn(this.registry);
    this.commandHistogram = new TallyHistogram(
      'sqlscribe_command_duration_seconds',
      'Time a command took in the bus, queueing for an engine included',
      ['command'],
    ).registerIn(this.registry);
    this.byStatusChild = new Children((status) => this.requestCounter.labels(status));
    this.byClassChild = new Children((statusClass) => this.classCounter.labels(statusClass));
    this.commandChild = new Children((key) => {
      const [command = '', outcome = ''] = key.split(' ');
      return this.commandCounter.labels(command, outcome);
    });
    this.commandTimeChild = new Children((command) => this.commandHistogram.labels(command));
    const entries = new client.Counter({
      name: 'sqlscribe_journal_entries_total',
      help: 'Journal entries durably written, by kind (exec, begin, commit, rollback, createdb, dropdb, copydb, resetdb, void, refused)',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.journalEntries = new Children((kind) => entries.labels(kind));
    // One series per error class and code that has occurred: the catalog bounds them (about eighty codes).
    const failures = new client.Counter({
      name: 'sqlscribe_journal_failed_total',
      help: 'Failed batches and statements in the journal, by error class (1-9) and engine code',
      labelNames: ['class', 'code'],
      registers: [this.registry],
    });
    this.journalFailures = new Children((key) => {
      const [errorClass = '', code = ''] = key.split(' ');
      return failures.labels(errorClass, code);
    });
    this.journalBytes = new client.Counter({
      name: 'sqlscribe_journal_bytes_total',
      help: 'Bytes durably written to the journal',
      registers: [this.registry],
    });
    this.journalRotations = new client.Counter({
      name: 'sqlscribe_journal_rotations_total',
      help: 'Journal file rotations',
      registers: [this.registry],
    });
    this.journalLastSeq = new client.Gauge({
      name: 'sqlscribe_journal_last_seq',
      help: 'The seq of the last durable journal entry',
      registers: [this.registry],
    });
    this.journalWriteSeconds = new client.Histogram({
      name: 'sqlscribe_journal_write_seconds',
      help: 'Time to write one chunk of journal entries, its fdatasync included with -log-fsync',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.followersCutCounter = new client.Counter({
      name: 'sqlscribe_journal_followers_cut_total',
      help: 'GET /journal event-stream followers disconnected for not reading fast enough',
      registers: [this.registry],
    });
    // Counted at the HTTP edge, whatever the journal's level: an alert on a probing client needs no journal at `all`.
    const refused = new client.Counter({
      name: 'sqlscribe_refused_total',
      help: 'Requests refused for who sent them or what they tried to reach (401, 403, and statements refused as hostile, [SQ1003]), by code',
      labelNames: ['code'],
      registers: [this.registry],
    });
    this.refusedByCode = new Children((code) => refused.labels(code));
    new client.Gauge({
      name: 'sqlscribe_uptime_seconds',
      help: 'Seconds since start',
      registers: [this.registry],
      collect: () => undefined,
    }).set(0);
  }

  observe(status: number, latencyMs: number): void {
    this.ring[this.requestsTotal % LATENCY_SAMPLE_RING] = latencyMs;
    this.requestsTotal++;
    const key = String(status);
    this.byStatus[key] = (this.byStatus[key] ?? 0) + 1;
    if (status >= 500) {
      this.errorsTotal++;
      this.errorCounter.inc();
    }
    if (isServerFault(status)) {
      this.faultsTotal++;
      this.faultCounter.inc();
    }
    this.byStatusChild.get(key).inc();
    this.byClassChild.get(`${Math.floor(status / 100)}xx`).inc();
    this.latencyHistogram.observe(latencyMs / 1000);
  }

  command(type: CommandType, outcome: string, seconds: number): void {
    this.commandChild.get(`${type} ${outcome}`).inc();
    this.commandTimeChild.get(type).observe(seconds);
  }

  written(entries: readonly EntryOutcome[], bytes: number, seconds: number, lastSeq: number): void {
    for (const entry of entries) {
      this.journalEntries.get(entry.kind).inc();
      // A refused request is no failed batch (sqlscribe_refused_total counts it, at every level), nor an exercise's answer that failed on its scratch copy.
      if (!entry.ok && entry.class !== undefined && entry.kind !== 'refused' && entry.kind !== 'attempt')
        this.journalFailures.get(`${entry.class} ${entry.code ?? 0}`).inc();
    }
    this.journalBytes.inc(bytes);
    this.journalLastSeq.set(lastSeq);
    this.journalWriteSeconds.observe(seconds);
  }

  rotated(): void {
    this.journalRotations.inc();
  }

  /** The journal's last seq when it was opened: the gauge says it before the first write. */
  journalOpenedAt(seq: number): void {
    this.journalLastSeq.set(seq);
  }

  /** A request was refused (see refusal-trace.ts): counted by its code. */
  refused(code: number): void {
    this.refusedByCode.get(String(code)).inc();
  }

  /** A journal follower fell too far behind and was disconnected. */
  followerCut(): void {
    this.followersCutCounter.inc();
  }

  /**
   * Gauges of replication, read when scraped: the role, the lease epoch, the
   * journal seq the databases hold and, on a replica, how far behind the
   * primary it is (in seqs and in seconds).
   */
  replicationFrom(status: () => ReplicationStatus): void {
    this.replication = status;
    const gauge = (name: string, help: string, value: (s: ReplicationStatus) => number): void => {
      new client.Gauge({
        name,
        help,
        registers: [this.registry],
        collect(this: client.Gauge) {
          this.set(value(status()));
        },
      });
    };
    gauge('sqlscribe_replication_applied_seq', "The journal seq this server's databases hold", (s) => s.appliedSeq);
    gauge('sqlscribe_replication_epoch', 'The primary lease epoch this server knows', (s) => s.epoch);
    gauge(
      'sqlscribe_replica_lag_seqs',
      'Replica: journal seqs the primary has that this replica has not applied (0 elsewhere)',
      (s) => s.lag?.seqBehind ?? 0,
    );
    gauge(
      'sqlscribe_replica_lag_seconds',
      'Replica: 0 when caught up, else the age of the last entry applied (0 elsewhere)',
      (s) => s.lag?.secondsBehind ?? 0,
    );
    new client.Gauge({
      name: 'sqlscribe_replication_role',
      help: "This server's role: 1 for the current one (primary, replica, fenced)",
      labelNames: ['role'],
      registers: [this.registry],
      collect(this: client.Gauge<'role'>) {
        const current = status().role;
        for (const role of ['primary', 'replica', 'fenced']) this.labels(role).set(role === current ? 1 : 0);
      },
    });
  }

  snapshot(): MetricsRecord {
    const sample = this.ring.slice(0, Math.min(this.requestsTotal, LATENCY_SAMPLE_RING)).sort();
    return {
      ok: true,
      started_unix: Math.floor(this.startedMs / 1000),
      uptime_s: Math.floor((Date.now() - this.startedMs) / 1000),
      requests_total: this.requestsTotal,
      requests_by_status: { ...this.byStatus },
      errors_total: this.errorsTotal,
      faults_total: this.faultsTotal,
      latency_ms: {
        p50: percentile(sample, 0.5),
        p95: percentile(sample, 0.95),
        samples: LATENCY_SAMPLE_RING,
        count: this.requestsTotal,
      },
      ...(this.replication === null ? {} : { replication: this.replication() }),
    };
  }

  prometheus(): Promise<string> {
    return this.registry.metrics();
  }

  get prometheusContentType(): string {
    return this.registry.contentType;
  }
}
