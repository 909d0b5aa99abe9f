/**
 * Database names are read on their exact code points: no character outside
 * ASCII is folded into a name, so no two names a client can write reach the
 * same file (`\u212Aey`, with the Kelvin sign, lower-cased to `key`).
 */
import t from 'tap';
import { normalizeDatabaseName } from '../src/database-names';
import { EngineError } from '../src/errors';

function refused(raw: string): boolean {
  try {
    normalizeDatabaseName(raw);
    return false;
  } catch (error) {
    return error instanceof EngineError && error.code === 1011;
  }
}

t.test('characters that fold to ASCII letters are refused, not folded', async (t) => {
  const lookalikes: Array<[string, string]> = [
    ['\u212Aey', 'Kelvin sign K'],
    ['\u212Bx', 'Angstrom sign'],
    ['\uFB01le', 'fi ligature'],
    ['\uFF4Bey', 'fullwidth k'],
    ['\uFF2Bey', 'fullwidth K'],
    ['\u0130stanbul', 'capital I with dot above'],
    ['\u0131zmir', 'dotless i'],
    ['ma\u017Fter', 'long s'],
    ['cafe\u0301', 'e and a combining acute'],
    ['caf\u00E9', 'precomposed e acute'],
    ['\u1E9Eig', 'capital sharp s'],
    ['\u2170v', 'small roman numeral one'],
    ['k\u200Bey', 'a zero-width space'],
    ['\u3000key', 'an ideographic space before'],
    ['key\u00A0', 'a no-break space after'],
    ['\uFEFFkey', 'a byte-order mark'],
    ['\u{1D424}ey', 'mathematical bold k'],
  ];
  for (const [raw, what] of lookalikes) t.ok(refused(raw), `${what} (${JSON.stringify(raw)}) is refused`);
});

t.test('no character outside ASCII makes a name, whatever it folds to', async (t) => {
  const accepted: string[] = [];
  for (let code = 0x80; code <= 0x1ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const ch = String.fromCodePoint(code);
    if (!refused(`a${ch}b`) || !refused(ch) || !refused(`${ch}key`)) accepted.push(code.toString(16));
  }
  t.same(accepted, [], 'every one refused');
});

t.test('ASCII names are as before: trimmed, lower-cased, .db appended', async (t) => {
  t.equal(normalizeDatabaseName('Key'), 'key.db');
  t.equal(normalizeDatabaseName(' key.db '), 'key.db');
  t.equal(normalizeDatabaseName('alumno-01'), 'alumno-01.db');
  t.ok(refused('a b'));
});
