// The failures of a tap run, told again at its end. tap streams thousands of lines, and a CI log
// keeps only its tail: without this, a red run says "fail: 2" and nothing of which two. tap writes
// each file's full TAP to .tap/test-results/; this reads those and names every failed assertion
// with the subtests around it and the first lines of its diagnostics.
import fs from 'node:fs';
import path from 'node:path';

const SUBTEST = /^(\s*)# Subtest: (.*)$/;
const NOT_OK = /^(\s*)not ok \d+ - (.*?)(?: # time=[\d.]+m?s)?$/;
const PLAN = /^(\s*)1\.\.\d+/;
const MAX_DIAGNOSTIC_LINES = 24;

/**
 * @typedef {{ path: string[], diagnostics: string[] }} Failure
 * @param {string} tap one file's TAP output
 * @returns {Failure[]} the failed assertions (a subtest that failed only because one of its own
 *   assertions did is not repeated), each with the names of its enclosing subtests
 */
export function failuresIn(tap) {
  const lines = tap.split('\n');
  /** @type {Failure[]} */
  const failures = [];
  /** @type {string[]} */
  const openSubtests = [];
  let previous = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const subtest = SUBTEST.exec(line);
    if (subtest) {
      openSubtests.length = subtest[1].length / 4;
      openSubtests.push(subtest[2]);
    }
    const notOk = NOT_OK.exec(line);
    if (notOk) {
      const depth = notOk[1].length / 4;
      const planOfChildren = PLAN.exec(previous);
      const closesSubtest = planOfChildren !== null && planOfChildren[1].length > notOk[1].length;
      if (!closesSubtest) {
        failures.push({ path: [...openSubtests.slice(0, depth), notOk[2]], diagnostics: diagnosticsAt(lines, i + 1) });
      }
      openSubtests.length = Math.min(openSubtests.length, depth);
    }
    if (line.trim() !== '') previous = line;
  }
  return failures;
}

/** The YAML block under a "not ok" line, without the quoted source (the stack names the line). */
function diagnosticsAt(lines, start) {
  if (lines[start]?.trim() !== '---') return [];
  const indent = lines[start].indexOf('---');
  const block = [];
  let inSource = false;
  for (let i = start + 1; i < lines.length && lines[i].trim() !== '...'; i++) {
    const text = lines[i].slice(indent);
    if (/^\S/.test(text)) inSource = text.startsWith('source:');
    if (!inSource) block.push(text);
  }
  return block.length > MAX_DIAGNOSTIC_LINES ? [...block.slice(0, MAX_DIAGNOSTIC_LINES), '(…)'] : block;
}

/**
 * Every failure in the result files tap wrote since `since` (a file not run this time keeps its
 * old results, which are not this run's).
 * @param {string} resultsDir .tap/test-results
 * @param {number} since epoch ms
 * @returns {string} a report, empty when nothing failed
 */
export function failureReport(resultsDir, since) {
  const out = [];
  for (const file of tapFilesUnder(resultsDir)) {
    if (fs.statSync(file).mtimeMs < since) continue;
    const testFile = path.relative(resultsDir, file).replace(/\.tap$/, '');
    for (const failure of failuresIn(fs.readFileSync(file, 'utf8'))) {
      out.push(`✗ ${[testFile, ...failure.path].join(' › ')}`);
      for (const line of failure.diagnostics) out.push(`    ${line}`);
    }
  }
  return out.join('\n');
}

function tapFilesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.tap'))
    .map((name) => path.join(dir, name))
    .sort();
}
