/**
 * The class view's summaries (src/services/class-activity.ts), fed entry by
 * entry as the journal's listener would: bounded errors, the failing
 * statement picked out of the batch, a reset or a drop starting again.
 */
import t from 'tap';
import type { Journal } from '../journal/journal';
import type { AppendListener } from '../journal/writer';
import type { JournalEntry } from '../journal/record';
import { ClassActivity, RECENT_ERRORS } from '../src/services/class-activity';

function fakeJournal(): { journal: Journal; append(entries: JournalEntry[]): void } {
  const listeners: AppendListener[] = [];
  const journal = {
    lastSeq: 0,
    enabled: true,
    onAppended: (listener: AppendListener) => {
      listeners.push(listener);
      return () => undefined;
    },
  } as unknown as Journal;
  return {
    journal,
    append: (entries) => {
      for (const listener of listeners)
        listener(
          entries.map((entry) => ({ entry, json: '' })),
          { fileFirstSeq: 1, offset: 0 },
        );
    },
  };
}

let seq = 0;
function entry(db: string, fields: Partial<JournalEntry>): JournalEntry {
  seq++;
  return {
    seq,
    ts: new Date(Date.UTC(2026, 0, 1, 9, 0, seq)).toISOString(),
    db,
    session: null,
    kind: 'exec',
    sql: 'SELECT 1',
    ok: true,
    ms: 1,
    ...fields,
  };
}

t.test('errors by database, bounded, with the statement that failed', async (tt) => {
  const { journal, append } = fakeJournal();
  const activity = new ClassActivity(journal, null);
  append([entry('a.db', { tokenName: 'ana' })]);
  append([
    entry('a.db', {
      ok: false,
      code: 3004,
      class: 3,
      error: '[SQ3004] x',
      statement: 1,
      tokenName: 'ana',
      sql: "SELECT ';';\nINSERT INTO t VALUES (1)",
      statements: [{ sql: "SELECT ';';\nINSERT INTO t VALUES (1)" }],
    }),
  ]);
  let view = await activity.activity();
  tt.match(view.get('a.db'), {
    entries: 2,
    recentErrors: [{ code: 3004, class: 3, tokenName: 'ana', statement: 'INSERT INTO t VALUES (1)' }],
  });
  tt.equal(view.get('a.db')?.lastActivity, new Date(Date.UTC(2026, 0, 1, 9, 0, seq)).toISOString());

  for (let i = 0; i < RECENT_ERRORS + 5; i++)
    append([entry('b.db', { ok: false, code: 1001, error: `e${i}`, sql: `SELEC ${i}` })]);
  view = await activity.activity();
  const errors = view.get('b.db')?.recentErrors ?? [];
  tt.equal(errors.length, RECENT_ERRORS, 'bounded');
  tt.equal(errors[errors.length - 1]?.statement, `SELEC ${RECENT_ERRORS + 4}`, 'the newest kept');
  tt.equal(errors[0]?.class, 1, 'the class from the code when the entry has none');

  append([entry('a.db', { kind: 'resetdb', from: 't.db', sql: null })]);
  tt.same((await activity.activity()).get('a.db')?.recentErrors, [], 'a reset starts again');
  append([entry('b.db', { kind: 'dropdb', sql: 'DROP DATABASE b' })]);
  tt.notOk((await activity.activity()).has('b.db'), 'a dropped database leaves');
  append([entry('c.db', { ok: false, code: 1001, error: 'e', sql: "SELECT 'unterminated" })]);
  tt.equal(
    (await activity.activity()).get('c.db')?.recentErrors[0]?.statement,
    "SELECT 'unterminated",
    'a text the splitter refuses is the statement',
  );
});
