/** Opening the statement journal, its header recording the service and engine versions it was written with. */
import { Journal } from '../../journal/journal';
import type { JournalObserver } from '../../journal/writer';
import { engineVersions } from '../engine/engine-versions';
import type { Config } from '../config/options';
import { version } from '../version';

/** `observer`: told of every durable chunk and rotation (the metrics). */
export function openJournal(config: Config, observer?: JournalObserver): Promise<Journal> {
  if (config.logFile === null || config.logLevel === 'none') return Promise.resolve(Journal.disabled());
  return Journal.open(config.logLevel, {
    file: config.logFile,
    maxSize: config.logMaxSize,
    fsync: config.logFsync,
    compress: config.logCompress,
    header: { service: 'sqlscribe', version, level: config.logLevel, ...engineVersions() },
    warn: (message) => process.stderr.write(`sqlscribe: ${message}\n`),
    ...(observer === undefined ? {} : { observer }),
  });
}
