/**
 * Flags whose default is kept as a typed value, for the table of every tool
 * (the server's flag-table.ts, replay's and tail's options). The value is
 * what the parser falls back to, and the `(default …)` of `-h` is made from
 * it, so the help cannot promise one default while the parser uses another.
 */
import { flagValue, type FlagSpec, type RawFlags } from './command-line';
import { formatDuration, formatSize } from './options-values';

/**
 * A default as a reader sees it: `value` is text they could type after the
 * flag to get the same setting (`<data directory>` and `<hostname>` stand
 * for what is known only at start-up), `words` what qualifies or replaces it.
 */
export interface ShownDefault {
  readonly value?: string;
  readonly words?: string;
}

/** A flag of a table: what the scanner and -h need, plus the default the parser takes. */
export interface TypedFlag<T> extends FlagSpec {
  /** What the parser takes when the flag is absent (a function when the default depends on other settings). */
  readonly fallback: T;
  /** The default for -h (and the server's page), made from `fallback` where it can be; null: the flag has none. */
  readonly shown: ShownDefault | null;
}

/** At least the flag's line of -h; a tool may carry more (the server's page has a Meaning column). */
export interface About {
  readonly help: string;
}

/** The -h form of a shown default: its value and words in one run. */
export function shownText(shown: ShownDefault): string {
  return [shown.value, shown.words].filter((part) => part !== undefined).join(' ');
}

/** Any flag; the named kinds below make the shown default from the value. */
export function typedFlag<T, A extends About>(
  arg: string | null,
  fallback: T,
  shown: ShownDefault | null,
  about: A,
): TypedFlag<T> & A {
  const text = shown === null ? {} : { default: shownText(shown) };
  return Object.freeze({ ...about, arg, ...text, fallback, shown });
}

export const durationFlag = <A extends About>(ms: number, about: A): TypedFlag<number> & A =>
  typedFlag('<duration>', ms, { value: formatDuration(ms) }, about);
export const sizeFlag = <A extends About>(bytes: number, about: A): TypedFlag<number> & A =>
  typedFlag('<size>', bytes, { value: formatSize(bytes) }, about);
export const countFlag = <A extends About>(n: number, about: A): TypedFlag<number> & A =>
  typedFlag('<N>', n, { value: String(n) }, about);
export const shareFlag = <A extends About>(part: number, about: A): TypedFlag<number> & A =>
  typedFlag('<fraction>', part, { value: String(part) }, about);

/** A flag whose default is a word or path written as the user would write it. */
export const textFlag = <A extends About>(arg: string, value: string, about: A): TypedFlag<string> & A =>
  typedFlag(arg, value, { value }, about);

/** A bare boolean flag (`-flag`, `-flag=false`); `words` qualify the default (`true with a journal`). */
export const toggleFlag = <A extends About>(on: boolean, about: A, words?: string): TypedFlag<boolean> & A =>
  typedFlag(null, on, words === undefined ? { value: String(on) } : { value: String(on), words }, about);

/** A flag that is off (null) unless given; `words` say what that means, or null to show no default. */
export const unsetFlag = <A extends About>(arg: string, words: string | null, about: A): TypedFlag<null> & A =>
  typedFlag(arg, null, words === null ? null : { words }, about);

/** A flag that takes one of a few words; the parser checks against `values`. */
export function oneOfFlag<T extends string, A extends About>(
  values: readonly T[],
  fallback: T,
  about: A,
): TypedFlag<T> & A & { readonly values: readonly T[] } {
  return Object.freeze({ ...typedFlag(`<${values.join('|')}>`, fallback, { value: fallback }, about), values });
}

type Table = Readonly<Record<string, TypedFlag<unknown>>>;

/** The names of a table whose default is a value of its own, not derived from other settings at start-up. */
export type ValueFlagName<F extends Table> = {
  [N in keyof F & string]: F[N]['fallback'] extends (...args: never[]) => unknown ? never : N;
}[keyof F & string];

/** The flag's value through `convert`, or the table's default when it was not given; a conversion error names the flag. */
export function valueOrDefault<F extends Table, N extends ValueFlagName<F>, T>(
  raw: RawFlags,
  flags: F,
  name: N,
  convert: (text: string) => T,
): T | F[N]['fallback'] {
  return flagValue<T | F[N]['fallback']>(raw, name, convert, (flags[name] as F[N]).fallback);
}
