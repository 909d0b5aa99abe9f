/**
 * The replay tool's command line, read by the same parser as the server's:
 * the same spellings, the same one-line messages naming the flag at fault.
 */
import path from 'node:path';
import t from 'tap';
import { parseReplayOptions, REPLAY_USAGE } from '../replay/replay-options';
import { parseCommandLine } from '../src/config/options';
import { OptionsError } from '../src/config/options-values';

import { optionsMessage } from './helpers/assertions';

const CWD = '/srv/app';

const message = optionsMessage;

t.test('reads the journal, the output and each selector, resolved against cwd', async (t) => {
  t.strictSame(
    parseReplayOptions(
      ['-log-file', 'j/s.jsonl', '-out=restore', '--db', 'School', '-until', '42', '-verify', 'data', '-force'],
      CWD,
    ),
    {
      logFile: path.join(CWD, 'j/s.jsonl'),
      out: path.join(CWD, 'restore'),
      db: 'school.db',
      until: { seq: 42 },
      verify: path.join(CWD, 'data'),
      force: true,
      snapshotDir: path.join(CWD, 'j', 'snapshots'),
    },
  );
  const atTime = parseReplayOptions(
    ['-log-file', 'j', '-out', 'o', '-until', '2026-11-25T10:15:00Z', '-no-snapshots', '-force=false'],
    CWD,
  );
  t.match(atTime, { until: { time: Date.parse('2026-11-25T10:15:00Z') }, snapshotDir: null, force: false });
  t.equal(parseReplayOptions(['-h'], CWD), 'help');
  t.match(REPLAY_USAGE, /-no-snapshots\n\s+ignore snapshots/, 'the help lists each flag from the same table');
});

t.test('refuses what it cannot use, with one line naming the flag', async (t) => {
  const replay = (...argv: string[]) => message(() => parseReplayOptions(argv, CWD));
  t.equal(replay('-out', 'o'), '-log-file is required');
  t.equal(replay('-log-file', 'j'), '-out is required');
  t.match(replay('-log-file', 'j', '-out', 'o', '-until', 'yesterday'), /^-until: expected a seq or an ISO time/);
  t.match(replay('-log-file', 'j', '-out', 'o', '-db', '../etc'), /^-db: .*database name/);
  t.match(replay('-log-file', 'j', '-out', 'o', '-snapshot-dir', 's', '-no-snapshots'), /cannot be used together/);
  t.match(replay('-log-file', 'j', '-out', ''), /^-out: expected a path/);
  t.match(replay('-log-file', 'j', '-out', 'o', 'extra'), /^unexpected argument "extra": replay takes only flags/);
});

t.test('the server and the replay tool answer the same slips alike', async (t) => {
  const server = (...argv: string[]) => message(() => parseCommandLine(argv, CWD));
  const replay = (...argv: string[]) => message(() => parseReplayOptions(['-out', 'o', ...argv], CWD));
  for (const said of [replay('-log-file'), server('-log-file')])
    t.match(said, /^-log-file: missing value \(usage: -log-file <\w+>\)$/, 'a missing value');
  t.equal(replay('-log-file', 'a', '-log-file', 'b'), server('-log-file', 'a', '-log-file', 'b'), 'a flag given twice');
  t.equal(replay('-log-fil', 'j'), server('-log-fil', 'j'), 'a typo gets the closest flag');
  t.match(replay('-log-file', '-force'), /^-log-file: missing value/, 'the next flag is not swallowed as the value');
  t.match(replay('-log-file', 'j', '-force', 'yes'), /write -force=yes/, 'a boolean takes its value after =');
});
