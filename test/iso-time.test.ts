/** The one strict ISO 8601 time reader (src/iso-time.ts) that restore's `to` and history's `since`/`until` share. */
import t from 'tap';
import { parseIsoTime } from '../src/iso-time';

t.test('reads a time with its zone, to the millisecond', async (t) => {
  t.equal(parseIsoTime('2026-11-26T10:15:00Z'), Date.UTC(2026, 10, 26, 10, 15, 0));
  t.equal(parseIsoTime('2026-11-26T10:15Z'), Date.UTC(2026, 10, 26, 10, 15, 0), 'seconds may be left out');
  t.equal(parseIsoTime('2026-11-26T11:15:00+01:00'), Date.UTC(2026, 10, 26, 10, 15, 0), 'an offset');
  t.equal(parseIsoTime('2026-11-26T05:45:00-04:30'), Date.UTC(2026, 10, 26, 10, 15, 0), 'a negative offset');
  t.equal(parseIsoTime('2026-11-26T10:15:00.123Z'), Date.UTC(2026, 10, 26, 10, 15, 0, 123), 'milliseconds');
  t.equal(
    parseIsoTime('2026-11-26T10:15:00.123456789Z'),
    Date.UTC(2026, 10, 26, 10, 15, 0, 123),
    'to nine digits, cut',
  );
  t.equal(parseIsoTime('2028-02-29T00:00:00Z'), Date.UTC(2028, 1, 29), 'a leap day of a leap year');
  t.equal(parseIsoTime('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29), '2000 was a leap year');
  t.equal(parseIsoTime(new Date(1_764_000_000_123).toISOString()), 1_764_000_000_123, 'what toISOString writes');
});

t.test('refuses what is not a real time with a zone, saying why', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['2026-02-30T10:00:00Z', /2026-02-30 is not a day of the calendar/],
    ['2026-02-29T10:00:00Z', /not a day of the calendar/],
    ['1900-02-29T10:00:00Z', /not a day of the calendar/],
    ['2026-04-31T10:00:00Z', /not a day of the calendar/],
    ['2026-13-01T10:00:00Z', /not a day of the calendar/],
    ['2026-00-10T10:00:00Z', /not a day of the calendar/],
    ['2026-11-26T24:00:00Z', /24:00:00 is not a time of day/],
    ['2026-11-26T10:60:00Z', /not a time of day/],
    ['2026-11-26T10:15:60Z', /not a time of day/],
    ['2026-11-26T10:15:00+24:00', /offset/],
    ['2026-11-26T10:15:00+01:60', /offset/],
    ['2026-11-26T10:15:00', /zone/],
    ['2026-11-26T10:15', /zone/],
    ['2026-11-26', /zone/],
    ['2026-11-26 10:15:00Z', /ISO 8601/],
    ['2026-11-26t10:15:00z', /ISO 8601/],
    ['26-11-26T10:15:00Z', /ISO 8601/],
    ['+002026-11-26T10:15:00Z', /ISO 8601/],
    ['2026-11-26T10:15:00.Z', /ISO 8601/],
    ['2026-11-26T10:15:00+0100', /ISO 8601/],
    ['yesterday', /ISO 8601/],
    ['', /ISO 8601/],
  ];
  for (const [text, why] of refused) {
    const result = parseIsoTime(text);
    t.type(result, 'object', `${JSON.stringify(text)} is refused`);
    t.match(typeof result === 'object' ? result.refused : '', why, `${JSON.stringify(text)}: says why`);
  }
});

t.test('years before 100 are those years, not the 1900s', async (t) => {
  t.equal(parseIsoTime('0026-01-01T00:00:00Z'), Date.parse('0026-01-01T00:00:00Z'));
});
