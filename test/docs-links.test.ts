/**
 * The README and the pages under docs/ link to each other and to files of the
 * repository. A moved or renamed file or heading must not leave a dead link,
 * and no link may point outside the repository: a clone has nothing there.
 * The README stays a five-minute read (at most 300 lines).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

const ROOT = path.resolve(__dirname, '..');
const README_MAX_LINES = 300;

/** README.md and every docs/*.md, as paths relative to the repository root. */
function documentationFiles(root: string): string[] {
  const docs = path.join(root, 'docs');
  const pages = fs.existsSync(docs)
    ? fs
        .readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => path.join('docs', name))
    : [];
  return ['README.md', ...pages];
}

/** The text without fenced code blocks and inline code spans, where brackets are not links. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`+[^`\n]*`+/g, '');
}

/** Every link target: inline links and images `[text](target "title")`, references `[x]: target`, autolinks `<http://…>`. */
function linkTargets(markdown: string): string[] {
  const text = withoutCode(markdown);
  const targets: string[] = [];
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1] ?? '');
  for (const match of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm))
    targets.push(match[1] ?? '');
  for (const match of text.matchAll(/<((?:https?|mailto):[^>\s]+)>/g)) targets.push(match[1] ?? '');
  return targets;
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped (not hyphens), spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file's headings make; a repeated heading gets -1, -2… as on GitHub. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** What is wrong with one link of `file` (relative to `root`), or null when it resolves. */
function linkProblem(root: string, file: string, target: string): string | null {
  if (/^(https?:|mailto:)/i.test(target)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return `${target} uses a scheme other than http(s) or mailto`;
  const hash = target.indexOf('#');
  const rawPath = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? '' : decodeURIComponent(target.slice(hash + 1));
  if (rawPath.startsWith('/')) return `${target} is absolute: link relative to ${file}`;
  const resolved =
    rawPath === ''
      ? path.join(root, file)
      : path.resolve(path.dirname(path.join(root, file)), decodeURIComponent(rawPath));
  const relative = path.relative(root, resolved);
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
    return `${target} leaves the repository`;
  if (!fs.existsSync(resolved)) return `${target}: ${relative} does not exist`;
  if (anchor !== '' && resolved.endsWith('.md')) {
    if (!anchors(fs.readFileSync(resolved, 'utf8')).has(anchor))
      return `${target}: ${relative} has no heading #${anchor}`;
  }
  return null;
}

t.test('the README is a five-minute read', async (t) => {
  const lines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
  t.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines (at most ${README_MAX_LINES})`);
});

t.test('every link of the README and docs/ resolves inside the repository', async (t) => {
  const files = documentationFiles(ROOT);
  t.ok(files.length > 1, 'there are pages under docs/');
  for (const file of files) {
    const markdown = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const targets = linkTargets(markdown);
    for (const target of targets) {
      const problem = linkProblem(ROOT, file, target);
      t.equal(problem, null, `${file}: ${target}`);
    }
  }
});

t.test('every docs/ page links back to the README and is linked from it', async (t) => {
  const readme = linkTargets(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8')).map((target) =>
    target.replace(/#.*/, ''),
  );
  for (const file of documentationFiles(ROOT).filter((name) => name !== 'README.md')) {
    const targets = linkTargets(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((target) =>
      target.replace(/#.*/, ''),
    );
    t.ok(targets.includes('../README.md'), `${file} links back to the README`);
    t.ok(readme.includes(file.split(path.sep).join('/')), `the README links to ${file}`);
  }
});

t.test('the checker catches what it is for', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'docs'));
  fs.writeFileSync(path.join(root, 'README.md'), '# Top\n\n## The journal, and replay\n\n## Run\n\n## Run\n');
  fs.writeFileSync(path.join(root, 'docs', 'a.md'), '# A\n');
  t.equal(linkProblem(root, 'docs/a.md', '../README.md'), null, 'a file');
  t.equal(
    linkProblem(root, 'docs/a.md', '../README.md#the-journal-and-replay'),
    null,
    'a heading, punctuation dropped',
  );
  t.equal(linkProblem(root, 'docs/a.md', '../README.md#run-1'), null, 'a repeated heading');
  t.equal(linkProblem(root, 'README.md', '#top'), null, 'an anchor in the same file');
  t.equal(linkProblem(root, 'README.md', 'https://example.org/x'), null, 'http(s) is allowed');
  t.match(linkProblem(root, 'docs/a.md', 'b.md'), /does not exist/, 'a missing file');
  t.match(linkProblem(root, 'docs/a.md', '../README.md#nope'), /no heading/, 'a missing heading');
  t.match(
    linkProblem(root, 'docs/a.md', '../../elsewhere.md'),
    /leaves the repository/,
    'a path out of the repository',
  );
  t.match(linkProblem(root, 'README.md', '/etc/passwd'), /absolute/, 'an absolute path');
  t.same(linkTargets('[a](x.md) ![b](y.png "t") `[c](z.md)`\n```\n[d](w.md)\n```\n[e]: v.md\n<https://example.org>'), [
    'x.md',
    'y.png',
    'v.md',
    'https://example.org',
  ]);
});
