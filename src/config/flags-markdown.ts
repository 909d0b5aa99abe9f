/**
 * The table of server flags as docs/flags.md publishes it, made from
 * SERVER_FLAGS like `-h` is. `npm run flags-doc` rewrites the part of the page
 * between the markers (the prose around them is written by hand), and a test
 * fails when the page differs from what the table makes.
 */
import fs from 'node:fs';
import type { ShownDefault } from './flag-defaults';
import { BUILT_IN_ROWS, SERVER_FLAGS, type ServerFlag } from './flag-table';

export const FLAGS_BEGIN = '<!-- flags:begin -->';
export const FLAGS_END = '<!-- flags:end -->';

/** A pipe would end the cell, even inside a code span. */
const cell = (markdown: string): string => markdown.replace(/\|/g, '\\|');

function shownMarkdown(shown: ShownDefault | null): string {
  if (shown === null) return '—';
  return [shown.value === undefined ? undefined : `\`${shown.value}\``, shown.words]
    .filter((part) => part !== undefined)
    .join(' ');
}

function row(name: string, spec: ServerFlag<unknown>): string {
  const usage = `\`-${name}${spec.arg === null ? '' : ` ${spec.arg}`}\``;
  return `| ${cell(usage)} | ${cell(shownMarkdown(spec.shown))} | ${cell(spec.doc)} |`;
}

/** The generated Markdown: one row per flag, in the order of -h, then the built-in flags. */
export function flagsMarkdown(): string {
  const lines = ['| Flag | Default | Meaning |', '|---|---|---|'];
  for (const [name, spec] of Object.entries(SERVER_FLAGS)) lines.push(row(name, spec));
  for (const [flags, meaning] of BUILT_IN_ROWS) lines.push(`| ${flags} | | ${meaning} |`);
  return lines.join('\n');
}

/** The page with the part between the markers replaced by `generated`; throws when the markers are missing. */
export function withFlagsSection(page: string, generated: string): string {
  const begin = page.indexOf(FLAGS_BEGIN);
  const end = page.indexOf(FLAGS_END);
  if (begin === -1 || end < begin) throw new Error(`expected ${FLAGS_BEGIN} … ${FLAGS_END} in the page`);
  return `${page.slice(0, begin + FLAGS_BEGIN.length)}\n${generated}\n${page.slice(end)}`;
}

/** Rewrites the generated part of a Markdown file (`npm run flags-doc`). */
export function updateFlagsPage(file: string): void {
  fs.writeFileSync(file, withFlagsSection(fs.readFileSync(file, 'utf8'), flagsMarkdown()));
}

if (require.main === module) updateFlagsPage(process.argv[2] ?? 'docs/flags.md');
