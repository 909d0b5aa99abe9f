// @ts-check
// Validates a value against the JSON Schema the server publishes at
// GET /pilots/schema, for the keywords that schema uses (type, enum, required,
// properties, additionalProperties, minLength, pattern, format: date, minimum,
// minItems, items). Violations have the server's shape and wording
// (src/pilots/pilot-validation.ts): { path: JSON Pointer, message }, so the
// form shows the same errors before and after a round trip.

/**
 * A value the schema refuses: where (a JSON pointer) and why.
 * @typedef {{ path: string, message: string }} Violation
 */

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * RFC 3339 full-date, as ajv-formats checks it: real months and days, leap years included.
 * @param {unknown} text
 * @returns {boolean}
 */
export function isDate(text) {
  const match = /^(\d\d\d\d)-(\d\d)-(\d\d)$/.exec(/** @type {string} */ (text));
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && leap ? 29 : DAYS[month]);
}

/**
 * @param {string} type
 * @param {unknown} value
 * @returns {boolean}
 */
function typeMatches(type, value) {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return true;
  }
}

/**
 * @param {string} path
 * @param {string | number} key
 * @returns {string}
 */
function pointer(path, key) {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/**
 * @param {any} schema a JSON Schema (the subset the pilot schema uses)
 * @param {any} value
 * @param {string} path
 * @param {Violation[]} out
 */
function check(schema, value, path, out) {
  if (schema.enum !== undefined && !schema.enum.some((/** @type {unknown} */ allowed) => allowed === value)) {
    out.push({ path, message: `must be one of ${schema.enum.join(', ')}` });
  }
  if (schema.type !== undefined && !typeMatches(schema.type, value)) {
    out.push({ path, message: `must be ${schema.type === 'integer' ? 'a whole number' : `of type ${schema.type}`}` });
    return;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && [...value].length < schema.minLength)
      out.push({ path, message: `must have at least ${schema.minLength} characters` });
    if (schema.format === 'date' && !isDate(value)) out.push({ path, message: 'must be a calendar date (YYYY-MM-DD)' });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value))
      out.push({ path, message: 'must be 7 to 40 lowercase hexadecimal characters' });
  }
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) {
    out.push({ path, message: `must be at least ${schema.minimum}` });
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      out.push({ path, message: `must have at least ${schema.minItems} item${schema.minItems === 1 ? '' : 's'}` });
    if (schema.items !== undefined)
      value.forEach((item, index) => check(schema.items, item, pointer(path, index), out));
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const name of schema.required ?? [])
      if (!(name in value)) out.push({ path: pointer(path, name), message: 'is required' });
    const properties = schema.properties ?? {};
    for (const [name, item] of Object.entries(value)) {
      if (name in properties) check(properties[name], item, pointer(path, name), out);
      else if (schema.additionalProperties === false)
        out.push({ path: pointer(path, name), message: 'is not allowed here' });
    }
  }
}

/**
 * Every violation of `value` against `schema` at once; [] when it is valid.
 * @param {any} schema
 * @param {unknown} value
 * @returns {Violation[]}
 */
export function validate(schema, value) {
  /** @type {Violation[]} */
  const out = [];
  check(schema, value, '', out);
  return out.map((v) => ({ ...v, path: v.path === '' ? '/' : v.path }));
}
