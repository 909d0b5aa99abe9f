/**
 * What a statement's text alone says (its shape for a read run in the server),
 * kept for recent texts: a class sends the same few SELECTs over and over.
 * Bounded like the splitter's cache: the oldest text goes first, and a text
 * longer than `maxLength` is worked out each time, not kept.
 */
export function memoByText<T extends object>(
  derive: (sql: string) => T | undefined,
  size: number,
  maxLength: number,
): (sql: string) => T | undefined {
  const known = new Map<string, T | null>();
  return (sql) => {
    const kept = known.get(sql);
    if (kept !== undefined) return kept ?? undefined;
    const derived = derive(sql);
    if (sql.length <= maxLength) {
      if (known.size >= size) known.delete(known.keys().next().value as string);
      known.set(sql, derived === undefined ? null : Object.freeze(derived));
    }
    return derived;
  };
}
