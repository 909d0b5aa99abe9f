#!/usr/bin/env node
// Regroups source files into folders from the move map beside this file (moves.json), and rewrites
// every path that named them. Written as a codemod rather than done by hand so that it can be run
// again on a tree it has never seen (other branches merged meanwhile): each rewrite is computed by
// resolving a path against where its file stood before the move, never from a list of edits.
//
//   node scripts/regroup/apply.mjs            run at the repository root, on a clean work tree
//   node scripts/regroup/apply.mjs --dry-run  print what it would do, change nothing
//   --map FILE                                another move map than the one beside this script
//
// What it rewrites, in every tracked text file (fixtures and this folder left out):
// - relative paths in code (import/export … from, import(), require(), mock paths, and a string
//   after __dirname): any './' or '../' string that resolves, from the file's old place, to a tracked
//   file or folder; also 'dist/…' forms of those, mapped back to their source for the look-up;
// - a path written as several string arguments (path.join(ROOT, 'src', 'options.ts')), either from
//   the root or after __dirname;
// - paths from the repository root anywhere else (docs links, comments, package.json, tsconfig,
//   'dist/src/….js' strings in benches and tests).
// It refuses to run twice: when a destination already exists, or when it finds nothing to move and no
// path to repair, it stops before changing anything. After a run, files that other branches add or
// edit against the old layout can be merged in and the codemod run again: it moves what the map
// names that is still at its old place, and rewrites a path written to an old place (from a new file,
// or from a moved file as it stood before) to the new one.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const posix = path.posix;
const DRY = process.argv.includes('--dry-run');
const ALLOW_DIRTY = process.argv.includes('--allow-dirty');
const ROOT = process.cwd();
/** The map beside this script (which may be run from another checkout on this tree), or --map FILE. */
const MAP_AT = process.argv.indexOf('--map');
const MAP_FILE =
  MAP_AT > 0 && process.argv[MAP_AT + 1] !== undefined
    ? path.resolve(process.argv[MAP_AT + 1])
    : path.join(path.dirname(fileURLToPath(import.meta.url)), 'moves.json');

/** Trees whose files are source; the root of a repo-relative path must be one of these. */
const SOURCE_ROOTS = ['src', 'journal', 'replay', 'tail', 'test', 'scripts'];
const CODE = /\.(?:[cm]?[jt]s)$/;
const TEXT = /\.(?:[cm]?[jt]s|json|md|ya?ml|sh|service|conf|html)$|^\.ci\/run$/;
/** Left alone: recorded data (a fixture is an old release's tree), and the codemod itself. */
const SKIP = [/^test\/fixtures\//, /^node_modules\//, /^dist\//, /^scripts\/regroup\//];

function git(...args) {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' });
}

function fail(message) {
  console.error(`regroup: ${message}`);
  process.exit(1);
}

// ---- the move map, expanded against this tree ----

function expandMoves(tracked) {
  const { moves } = JSON.parse(fs.readFileSync(MAP_FILE, 'utf8'));
  const result = new Map();
  const done = new Map();
  const missing = [];
  const trackedSet = new Set(tracked);
  for (const [from, to] of Object.entries(moves)) {
    if (from.startsWith('#')) continue;
    if (from.includes('*')) {
      if (!to.endsWith('/')) fail(`${from}: a pattern moves into a folder, so its value must end with /`);
      const dir = posix.dirname(from);
      const pattern = new RegExp(
        `^${posix
          .basename(from)
          .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '[^/]*')}$`,
      );
      const matched = tracked.filter((file) => posix.dirname(file) === dir && pattern.test(posix.basename(file)));
      const moved = tracked.filter(
        (file) =>
          posix.dirname(file) === to.replace(/\/+$/, '') &&
          pattern.test(posix.basename(file)) &&
          !trackedSet.has(posix.join(dir, posix.basename(file))),
      );
      if (matched.length === 0 && moved.length === 0) missing.push(from);
      for (const file of matched) result.set(file, posix.join(to, posix.basename(file)));
      for (const file of moved) done.set(posix.join(dir, posix.basename(file)), file);
    } else {
      const dest = to.endsWith('/') ? posix.join(to, posix.basename(from)) : to;
      if (trackedSet.has(from)) result.set(from, dest);
      else if (trackedSet.has(dest)) done.set(from, dest);
      else missing.push(from);
    }
  }
  return { moves: result, done, missing };
}

// ---- resolving a path as it stood before the moves ----

function makeResolver(tracked, virtual) {
  const dirs = new Set();
  for (const file of tracked) for (let dir = posix.dirname(file); dir !== '.'; dir = posix.dirname(dir)) dirs.add(dir);
  const real = resolverOver(new Set(tracked), dirs);
  const former = resolverOver(new Set(virtual), new Set());
  /** What is in the tree first; only then an old place of a file an earlier run moved. */
  return (target) => real(target) ?? former(target);
}

function resolverOver(files, dirs) {
  /**
   * The tracked file (or folder) a repo-relative path names, and how it was written: `dist` (a build
   * output path: dist/X.js for X.ts), `suffix` (what follows the source path's stem), `index`.
   */
  return function resolve(target) {
    let dist = false;
    let rest = posix.normalize(target);
    if (rest.startsWith('dist/')) {
      dist = true;
      rest = rest.slice('dist/'.length);
    }
    if (dist) {
      for (const ext of ['.js.map', '.d.ts', '.js']) {
        if (rest.endsWith(ext) && files.has(rest.slice(0, -ext.length) + '.ts'))
          return { file: rest.slice(0, -ext.length) + '.ts', dist, written: ext };
      }
      if (files.has(`${rest}.ts`)) return { file: `${rest}.ts`, dist, written: '' };
      if (dirs.has(rest)) return { dir: rest, dist };
      return undefined;
    }
    if (files.has(rest)) return { file: rest, dist, written: 'as-is' };
    for (const ext of ['.ts', '.mts', '.js', '.mjs'])
      if (files.has(rest + ext)) return { file: rest + ext, dist, written: '' };
    if (rest.endsWith('.js') && files.has(rest.slice(0, -3) + '.ts'))
      return { file: rest.slice(0, -3) + '.ts', dist, written: '.js' };
    if (files.has(`${rest}/index.ts`)) return { file: `${rest}/index.ts`, dist, written: '/index' };
    if (dirs.has(rest)) return { dir: rest, dist };
    return undefined;
  };
}

/** The path that names `found` after the moves, written the way the original was. */
function spell(found, moves) {
  if (found.dir !== undefined) return (found.dist ? 'dist/' : '') + found.dir;
  const file = moves.get(found.file) ?? found.file;
  let text;
  if (found.written === 'as-is') text = file;
  else if (found.written === '/index') text = posix.dirname(file);
  else text = file.replace(/\.[cm]?[jt]s$/, '') + found.written;
  return (found.dist ? 'dist/' : '') + text;
}

function touches(found, moves) {
  return found.file !== undefined && moves.has(found.file);
}

// ---- the rewrites of one file ----

/** Relative strings in code: './x', '../x', and a bare name right after __dirname. */
const RELATIVE_STRING = /(['"`])(\.\.?\/[^'"`\n$]*)\1|__dirname\s*,\s*(['"])([^'"\n./][^'"\n]*)\3/g;
/** A path given as several string arguments (path.join(ROOT, 'src', 'options.ts'), path.join(__dirname, '..', 'x.ts')). */
const SEGMENTS = /(['"])[\w.@-]+(?:\/[\w.@-]+)*\1(?:\s*,\s*(['"])[\w.@-]+(?:\/[\w.@-]+)*\2)+/g;
/** A path from the repository root (optionally the build's), with a boundary before it. */
const ROOTED_PATH = new RegExp(
  `(?<![A-Za-z0-9_@-])((?:dist/)?(?:${SOURCE_ROOTS.join('|')})/[A-Za-z0-9_./-]*[A-Za-z0-9_])`,
  'g',
);

function rewritesOf(file, text, moves, resolve, warnings, formerly) {
  const newFile = moves.get(file) ?? file;
  const oldDir = posix.dirname(file);
  const newDir = posix.dirname(newFile);
  const edits = [];
  const taken = [];
  const isTaken = (start, end) => taken.some(([a, b]) => start < b && end > a);
  if (CODE.test(file)) {
    for (const match of text.matchAll(SEGMENTS)) {
      const literals = [...match[0].matchAll(/(['"])([^'"\n]*)\1/g)];
      const segments = literals.map((literal) => literal[2]);
      const quote = literals[0][1];
      const afterDirname = /__dirname\s*,\s*$/.test(text.slice(Math.max(0, match.index - 40), match.index));
      const joinedText = segments.join('/');
      const rooted = !afterDirname && new RegExp(`^(?:dist/)?(?:${SOURCE_ROOTS.join('|')})/`).test(joinedText);
      if (!afterDirname && !rooted) continue;
      const joined = posix.normalize(afterDirname ? posix.join(oldDir, joinedText) : joinedText);
      const found = joined.startsWith('..') ? undefined : resolve(joined);
      if (found === undefined) continue;
      taken.push([match.index, match.index + match[0].length]);
      if (!touches(found, moves) && (rooted || newDir === oldDir)) continue;
      const target = spell(found, moves);
      const to = (rooted ? target : posix.relative(newDir, target) || '.')
        .split('/')
        .map((segment) => `${quote}${segment}${quote}`)
        .join(', ');
      if (to !== match[0]) edits.push({ start: match.index, end: match.index + match[0].length, from: match[0], to });
    }
    for (const match of text.matchAll(RELATIVE_STRING)) {
      const literal = match[2] ?? match[4];
      const bare = match[4] !== undefined;
      const start = bare ? match.index + match[0].length - 1 - literal.length : match.index + 1;
      if (isTaken(start, start + literal.length)) continue;
      const joined = posix.normalize(posix.join(oldDir, literal));
      let found = joined.startsWith('..') ? undefined : resolve(joined);
      let stale = false;
      if (found === undefined && formerly !== undefined) {
        // A file moved by an earlier run, with a path written (on another branch) from where it stood then.
        const before = posix.normalize(posix.join(posix.dirname(formerly), literal));
        found = before.startsWith('..') ? undefined : resolve(before);
        stale = found !== undefined;
      }
      if (found === undefined) {
        const before = text.slice(Math.max(0, match.index - 60), match.index);
        if (newDir !== oldDir && !bare && /(?:\bfrom|\brequire|\bimport|\bmock\w*(?:<[^>]*>)?)\(?\s*$/.test(before))
          warnings.push(`${file}: '${literal}' names nothing tracked; left as written although the file moves`);
        continue;
      }
      taken.push([start, start + literal.length]);
      if (newDir === oldDir && !touches(found, moves) && !stale) continue;
      let rel = posix.relative(newDir, spell(found, moves)) || '.';
      if (literal.endsWith('/') && !rel.endsWith('/')) rel += '/';
      if (!rel.startsWith('.')) rel = bare ? rel : `./${rel}`;
      if (rel !== literal) edits.push({ start, end: start + literal.length, from: literal, to: rel });
    }
  }
  for (const match of text.matchAll(ROOTED_PATH)) {
    const start = match.index;
    const end = start + match[1].length;
    if (isTaken(start, end)) continue;
    // A path inside a longer relative one (docs/../src/x) is still from the root only when what precedes it is ../ steps to the root.
    const found = resolve(match[1]);
    if (found === undefined || !touches(found, moves)) continue;
    const to = spell(found, moves);
    if (to !== match[1]) edits.push({ start, end, from: match[1], to });
  }
  return edits.sort((a, b) => a.start - b.start);
}

function applyEdits(text, edits) {
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += text.slice(at, edit.start) + edit.to;
    at = edit.end;
  }
  return out + text.slice(at);
}

// ---- the run ----

function main() {
  if (!fs.existsSync(path.join(ROOT, '.git'))) fail('run me at the repository root');
  if (!ALLOW_DIRTY && !DRY && git('status', '--porcelain', '--untracked-files=no').trim() !== '')
    fail('the work tree has changes: commit or stash them first, so that this run is one mechanical commit');
  const tracked = git('ls-files', '-z')
    .split('\0')
    .filter(Boolean)
    .filter((file) => fs.existsSync(path.join(ROOT, file)));
  const { moves, done, missing } = expandMoves(tracked);
  const trackedSet = new Set(tracked);
  const destinations = new Map();
  for (const [from, to] of moves) {
    if (trackedSet.has(to) || fs.existsSync(path.join(ROOT, to)))
      fail(`${to} exists already: has this been run before? (nothing changed)`);
    if (destinations.has(to)) fail(`${from} and ${destinations.get(to)} both move to ${to}`);
    destinations.set(to, from);
  }
  for (const entry of missing) console.log(`skip  ${entry} (not in this tree)`);

  // Moves an earlier run made: paths to their old places (written since, on other branches) are repaired too.
  const resolve = makeResolver(tracked, done.keys());
  const formerly = new Map([...done].map(([from, to]) => [to, from]));
  const everyMove = new Map([...done, ...moves]);
  const warnings = [];
  const changed = new Map();
  for (const file of tracked) {
    if (!TEXT.test(file) || SKIP.some((skip) => skip.test(file))) continue;
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const edits = rewritesOf(file, text, everyMove, resolve, warnings, formerly.get(file));
    if (edits.length > 0) changed.set(file, { text: applyEdits(text, edits), edits });
  }

  for (const [from, to] of moves) console.log(`move  ${from} -> ${to}`);
  let count = 0;
  for (const [file, { edits }] of changed) {
    count += edits.length;
    for (const edit of edits) console.log(`edit  ${moves.get(file) ?? file}: ${edit.from} -> ${edit.to}`);
  }
  if (moves.size === 0 && count === 0)
    fail(
      'nothing in the map is in this tree, and no path names an old place: has this been run before? (nothing changed)',
    );
  for (const warning of warnings) console.log(`warn  ${warning}`);
  console.log(
    `regroup: ${moves.size} files moved, ${count} paths rewritten in ${changed.size} files${done.size > 0 ? ` (${done.size} files were moved by an earlier run: paths to their old places repaired)` : ''}${DRY ? ' (dry run: nothing changed)' : ''}`,
  );
  if (DRY) return;

  for (const [from, to] of moves) {
    fs.mkdirSync(path.dirname(path.join(ROOT, to)), { recursive: true });
    git('mv', from, to);
  }
  for (const [file, { text }] of changed) fs.writeFileSync(path.join(ROOT, moves.get(file) ?? file), text);
  git('add', '-A', '--', ...new Set([...changed.keys()].map((file) => moves.get(file) ?? file)));
}

main();
