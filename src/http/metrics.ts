/**
 * Operational metrics since start-up: the JSON record of the specification
 * and the same figures for Prometheus. Every figure is counted in plain
 * fields (metric-tallies.ts); prom-client, which writes the Prometheus text
 * and adds Node's own figures, is loaded at the first Prometheus scrape.
 */
import type client from 'prom-client';
import { isServerFault } from './server-fault';
import { TallyCounter, TallyGauge, TallyHistogram } from './metric-tallies';
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

/** A labelled tally's series per label value, found once (its key is one string, not a list). */
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
  private readonly requests = new TallyCounter('sqlscribe_http_requests_total', 'HTTP requests by status', ['status']);
  private readonly classes = new TallyCounter(
    'sqlscribe_http_responses_total',
    'HTTP responses by status class (2xx, 4xx, 5xx)',
    ['class'],
  );
  // errors_total is every 5xx, as the specification defines it; a 503 is load shedding, so faults_total leaves it out for alerts on breakage.
  private readonly errors = new TallyCounter('sqlscribe_errors_total', 'Responses with status >= 500, 503 included');
  private readonly faults = new TallyCounter(
    'sqlscribe_faults_total',
    'Responses that were server faults: 5xx other than 503',
  );
  private readonly latency = new TallyHistogram('sqlscribe_http_request_duration_seconds', 'HTTP request latency');
  private readonly commands = new TallyCounter(
    'sqlscribe_commands_total',
    'Commands the bus ran, by command and outcome (ok, the error class such as class3, or fault)',
    ['command', 'outcome'],
  );
  private readonly commandTimes = new TallyHistogram(
    'sqlscribe_command_duration_seconds',
    'Time a command took in the bus, queueing for an engine included',
    ['command'],
  );
  private readonly journalEntries = new TallyCounter(
    'sqlscribe_journal_entries_total',
    'Journal entries durably written, by kind (exec, begin, commit, rollback, createdb, dropdb, copydb, resetdb, void, refused)',
    ['kind'],
  );
  // One series per error class and code that has occurred: the catalog bounds them (about eighty codes).
  private readonly journalFailures = new TallyCounter(
    'sqlscribe_journal_failed_total',
    'Failed batches and statements in the journal, by error class (1-9) and engine code',
    ['class', 'code'],
  );
  private readonly journalBytes = new TallyCounter(
    'sqlscribe_journal_bytes_total',
    'Bytes durably written to the journal',
  );
  private readonly journalRotations = new TallyCounter('sqlscribe_journal_rotations_total', 'Journal file rotations');
  private readonly journalLastSeq = new TallyGauge(
    'sqlscribe_journal_last_seq',
    'The seq of the last durable journal entry',
  );
  private readonly journalWriteSeconds = new TallyHistogram(
    'sqlscribe_journal_write_seconds',
    'Time to write one chunk of journal entries, its fdatasync included with -log-fsync',
    [],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  );
  private readonly followersCut = new TallyCounter(
    'sqlscribe_journal_followers_cut_total',
    'GET /journal event-stream followers disconnected for not reading fast enough',
  );
  // Counted at the HTTP edge, whatever the journal's level: an alert on a probing client needs no journal at `all`.
  private readonly refusals = new TallyCounter(
    'sqlscribe_refused_total',
    'Requests refused for who sent them or what they tried to reach (401, 403, and statements refused as hostile, [SQ1003]), by code',
    ['code'],
  );
  /** The order /metrics?format=prometheus lists them in, after Node's own. */
  private readonly tallies = [
    this.requests,
    this.classes,
    this.errors,
    this.faults,
    this.latency,
    this.commands,
    this.commandTimes,
    this.journalEntries,
    this.journalFailures,
    this.journalBytes,
    this.journalRotations,
    this.journalLastSeq,
    this.journalWriteSeconds,
    this.followersCut,
    this.refusals,
  ];
  private readonly byStatusSeries = new Children((status) => this.requests.labels(status));
  private readonly byClassSeries = new Children((statusClass) => this.classes.labels(statusClass));
  private readonly commandSeries = new Children((key) => this.commands.labels(...key.split(' ')));
  private readonly commandTimeSeries = new Children((command) => this.commandTimes.labels(command));
  private readonly entrySeries = new Children((kind) => this.journalEntries.labels(kind));
  private readonly failureSeries = new Children((key) => this.journalFailures.labels(...key.split(' ')));
  private readonly refusalSeries = new Children((code) => this.refusals.labels(code));
  private readonly errorsSeries = this.errors.labels();
  private readonly faultsSeries = this.faults.labels();
  private readonly journalBytesSeries = this.journalBytes.labels();
  private readonly journalRotationsSeries = this.journalRotations.labels();
  private readonly followersCutSeries = this.followersCut.labels();
  private readonly latencySeries = this.latency.labels();
  private readonly writeSecondsSeries = this.journalWriteSeconds.labels();
  private replication: (() => ReplicationStatus) | null = null;
  /** prom-client's registry over the tallies, made at the first Prometheus scrape. */
  private registry: Promise<client.Registry> | null = null;
  private contentType = 'text/plain; version=0.0.4; charset=utf-8';

  observe(status: number, latencyMs: number): void {
    this.ring[this.requestsTotal % LATENCY_SAMPLE_RING] = latencyMs;
    this.requestsTotal++;
    const key = String(status);
    this.byStatus[key] = (this.byStatus[key] ?? 0) + 1;
    if (status >= 500) {
      this.errorsTotal++;
      this.errorsSeries.inc();
    }
    if (isServerFault(status)) {
      this.faultsTotal++;
      this.faultsSeries.inc();
    }
    this.byStatusSeries.get(key).inc();
    this.byClassSeries.get(`${Math.floor(status / 100)}xx`).inc();
    this.latencySeries.observe(latencyMs / 1000);
  }

  command(type: CommandType, outcome: string, seconds: number): void {
    this.commandSeries.get(`${type} ${outcome}`).inc();
    this.commandTimeSeries.get(type).observe(seconds);
  }

  written(entries: readonly EntryOutcome[], bytes: number, seconds: number, lastSeq: number): void {
    for (const entry of entries) {
      this.entrySeries.get(entry.kind).inc();
      // A refused request is no failed batch (sqlscribe_refused_total counts it, at every level), nor an exercise's answer that failed on its scratch copy.
      if (!entry.ok && entry.class !== undefined && entry.kind !== 'refused' && entry.kind !== 'attempt')
        this.failureSeries.get(`${entry.class} ${entry.code ?? 0}`).inc();
    }
    this.journalBytesSeries.inc(bytes);
    this.journalLastSeq.set(lastSeq);
    this.writeSecondsSeries.observe(seconds);
  }

  rotated(): void {
    this.journalRotationsSeries.inc();
  }

  /** The journal's last seq when it was opened: the gauge says it before the first write. */
  journalOpenedAt(seq: number): void {
    this.journalLastSeq.set(seq);
  }

  /** A request was refused (see refusal-trace.ts): counted by its code. */
  refused(code: number): void {
    this.refusalSeries.get(String(code)).inc();
  }

  /** A journal follower fell too far behind and was disconnected. */
  followerCut(): void {
    this.followersCutSeries.inc();
  }

  /**
   * Replication's state, read when scraped: as gauges, the role, the lease
   * epoch, the journal seq the databases hold and, on a replica, how far
   * behind the primary it is (in seqs and in seconds).
   */
  replicationFrom(status: () => ReplicationStatus): void {
    this.replication = status;
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

  async prometheus(): Promise<string> {
    this.registry ??= this.prometheusRegistry();
    return (await this.registry).metrics();
  }

  /** The Content-Type of prometheus()'s text. */
  get prometheusContentType(): string {
    return this.contentType;
  }

  private async prometheusRegistry(): Promise<client.Registry> {
    const prometheus = await import('prom-client');
    const registry = new prometheus.Registry();
    this.contentType = registry.contentType;
    // Node's own figures (memory, CPU, event loop, GC) count from here, the first scrape.
    prometheus.collectDefaultMetrics({ register: registry, prefix: 'sqlscribe_' });
    for (const tally of this.tallies) tally.registerIn(registry);
    const startedMs = this.startedMs;
    new prometheus.Gauge({
      name: 'sqlscribe_uptime_seconds',
      help: 'Seconds since start',
      registers: [registry],
      collect(this: client.Gauge) {
        this.set(Math.floor((Date.now() - startedMs) / 1000));
      },
    });
    const status = this.replication;
    if (status !== null) replicationGauges(prometheus, registry, status);
    return registry;
  }
}

function replicationGauges(
  prometheus: typeof client,
  registry: client.Registry,
  status: () => ReplicationStatus,
): void {
  const gauge = (name: string, help: string, value: (s: ReplicationStatus) => number): void => {
    new prometheus.Gauge({
      name,
      help,
      registers: [registry],
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
  new prometheus.Gauge({
    name: 'sqlscribe_replication_role',
    help: "This server's role: 1 for the current one (primary, replica, fenced)",
    labelNames: ['role'],
    registers: [registry],
    collect(this: client.Gauge<'role'>) {
      const current = status().role;
      for (const role of ['primary', 'replica', 'fenced']) this.labels(role).set(role === current ? 1 : 0);
    },
  });
}
