/**
 * The one table of server flags: docs/flags.md shows what it makes, `-h`
 * shows each default it holds, and every default it shows as a value means,
 * typed on the command line, exactly what the parser does without the flag
 * (for replay's and tail's tables too). The Config comments point to the
 * table instead of restating defaults.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { shownText } from '../src/config/flag-defaults';
import { SERVER_FLAGS, type ServerFlag } from '../src/config/flag-table';
import { FLAGS_BEGIN, FLAGS_END, flagsMarkdown, withFlagsSection } from '../src/config/flags-markdown';
import { parseCommandLine, usage, type Config } from '../src/config/options';
import { formatDuration, formatSize, parseDuration, parseSize } from '../src/config/options-values';
import { parseReplayOptions, REPLAY_FLAGS } from '../replay/replay-options';
import { parseTailOptions, TAIL_FLAGS } from '../tail/tail-options';
import type { TypedFlag } from '../src/config/flag-defaults';

const ROOT = path.resolve(__dirname, '..');
const CWD = path.resolve('/srv/app');
const flags = Object.entries(SERVER_FLAGS) as [string, ServerFlag<unknown>][];

function config(argv: readonly string[]): Config {
  const parsed = parseCommandLine(argv, CWD);
  if (parsed.kind !== 'config') throw new Error(`expected a config for ${argv.join(' ')}`);
  return parsed.config;
}

t.test('docs/flags.md publishes exactly what the table makes', async (t) => {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'flags.md'), 'utf8');
  const match = new RegExp(`${FLAGS_BEGIN}\\n([\\s\\S]*?)\\n${FLAGS_END}`).exec(page);
  t.ok(match, 'docs/flags.md has the flags markers');
  t.equal(match?.[1], flagsMarkdown(), 'docs/flags.md equals the table (regenerate with: npm run flags-doc)');
});

t.test('the generator rewrites only what lies between the markers', async (t) => {
  const page = `# Flags\n\nby hand\n\n${FLAGS_BEGIN}\n| stale |\n${FLAGS_END}\n\nalso by hand\n`;
  t.equal(
    withFlagsSection(page, '| fresh |'),
    `# Flags\n\nby hand\n\n${FLAGS_BEGIN}\n| fresh |\n${FLAGS_END}\n\nalso by hand\n`,
  );
  t.throws(
    () => withFlagsSection('# Flags\n', '| fresh |'),
    /flags:begin/,
    'a page without markers is an error, not left as it was',
  );
});

t.test('the page has a row, and -h a line, for every flag of the table', async (t) => {
  const page = flagsMarkdown();
  const help = usage();
  for (const [name, spec] of flags) {
    t.match(page, new RegExp(`^\\| \`-${name}[ \`]`, 'm'), `-${name} on the page`);
    const line = `  -${name}${spec.arg === null ? '' : ` ${spec.arg}`}\n        ${spec.help}`;
    const shown = spec.shown === null ? '' : ` (default ${shownText(spec.shown)})`;
    t.ok(help.includes(`${line}${shown}\n`), `-${name} in -h with ${shown === '' ? 'no default' : shown.trim()}`);
  }
});

/** The flags a flag is only accepted with. */
const CONTEXT: Readonly<Record<string, readonly string[]>> = {
  'journal-stream': ['-journal-nats', 'nats://127.0.0.1:4222'],
  'journal-replicas': ['-journal-nats', 'nats://127.0.0.1:4222'],
  'journal-timeout': ['-journal-nats', 'nats://127.0.0.1:4222'],
  node: ['-journal-nats', 'nats://127.0.0.1:4222'],
  promote: ['-follow', 'nats://127.0.0.1:4222'],
  'min-seq-wait': ['-follow', 'nats://127.0.0.1:4222'],
};

/** What the placeholders of a shown default stand for at CWD with no -dir. */
const typed = (value: string): string =>
  value.replace('<data directory>', path.join(CWD, 'data')).replace('<hostname>', os.hostname());

t.test('a default shown as a value, given as the flag, is what the parser takes without it', async (t) => {
  let checked = 0;
  for (const [name, spec] of flags) {
    if (spec.shown?.value === undefined) continue;
    const context = CONTEXT[name] ?? [];
    t.same(
      config([...context, `-${name}=${typed(spec.shown.value)}`]),
      config(context),
      `-${name}=${spec.shown.value}`,
    );
    checked++;
  }
  t.ok(checked >= 30, `${checked} defaults checked`);
});

t.test('replay and tail: a default shown as a value, given as the flag, changes nothing', async (t) => {
  const tools: [string, Readonly<Record<string, TypedFlag<unknown>>>, (argv: string[]) => unknown][] = [
    ['replay', REPLAY_FLAGS, (argv) => parseReplayOptions(['-log-file', 'j.jsonl', '-out', 'o', ...argv], CWD)],
    ['tail', TAIL_FLAGS, (argv) => parseTailOptions(['-log-file', 'j.jsonl', ...argv], CWD)],
  ];
  for (const [tool, table, parse] of tools) {
    const shown = Object.entries(table).filter(([, spec]) => spec.shown?.value !== undefined);
    t.ok(shown.length >= 2, `${tool}: ${shown.length} defaults checked`);
    for (const [name, spec] of shown)
      t.same(parse([`-${name}=${spec.shown?.value ?? ''}`]), parse([]), `${tool} -${name}=${spec.shown?.value ?? ''}`);
  }
});

t.test('the Config comments restate no default', async (t) => {
  const source = fs.readFileSync(path.join(ROOT, 'src', 'config', 'options.ts'), 'utf8');
  t.notMatch(source, /@default/, 'src/config/options.ts: defaults are written in src/config/flag-table.ts only');
});

t.test('a duration or size default is shown the way it is read back', async (t) => {
  t.same([300_000, 600_000, 15_000, 90_000, 1500, 0].map(formatDuration), [
    '5m',
    '10m',
    '15s',
    '1m30s',
    '1s500ms',
    '0',
  ]);
  t.same([1024 * 1024, 16 * 1024 * 1024, 1024 ** 3, 512 * 1024, 1000].map(formatSize), [
    '1M',
    '16M',
    '1G',
    '512K',
    '1000',
  ]);
  // Up to the longest timer a duration flag takes; parseDuration's nanosecond rounding loses whole ms far beyond it.
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (ms) => parseDuration(formatDuration(ms)) === ms));
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 45 }), (bytes) => parseSize(formatSize(bytes)) === bytes));
});
