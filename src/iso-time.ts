/**
 * The one reader of the ISO 8601 times a client names a moment with: a
 * restore's `"to"` and history's `since` and `until`. Strict where
 * `Date.parse` is lenient: it reads `2026-02-30` as 2 March and a time
 * without a zone in the server's own zone, so the same text could name two
 * moments on two servers, or a day that never was. Here a time is
 * `YYYY-MM-DDTHH:MM[:SS[.fraction]]` and then `Z` or `±HH:MM`, its date one
 * of the calendar's and its time one of the day's; anything else is refused
 * with the reason.
 */

/** What every refusal says a time must be: both readers word their errors with it. */
export const ISO_TIME_EXPECTED =
  'an ISO 8601 time with its zone, such as 2026-11-26T10:15:00Z or 2026-11-26T11:15:00+01:00';

/** A refused text: why, in words that follow ISO_TIME_EXPECTED. */
export interface IsoTimeRefusal {
  readonly refused: string;
}

const SHAPE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
}

/** The time `text` names, in ms since the epoch, or why it names none. */
export function parseIsoTime(text: string): number | IsoTimeRefusal {
  const match = SHAPE.exec(text);
  if (match === null) return { refused: `${JSON.stringify(text.slice(0, 64))} is not written as ISO 8601` };
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month))
    return { refused: `${match[1]}-${match[2]}-${match[3]} is not a day of the calendar` };
  if (match[4] === undefined || match[8] === undefined)
    return {
      refused: "a time without its zone (Z, or an offset such as +01:00) would be read in the server's own zone",
    };
  const [hour, minute, second] = [Number(match[4]), Number(match[5]), Number(match[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59)
    return { refused: `${match[4]}:${match[5]}:${match[6] ?? '00'} is not a time of day` };
  const ms = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const zone = match[8];
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const [hours, minutes] = [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
    if (hours > 23 || minutes > 59) return { refused: `${zone} is not an offset from UTC` };
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime() - offsetMinutes * 60_000;
}
