/**
 * Validates a pilot record against its schema with ajv: every violation at
 * once, each with its JSON path and a message in plain words.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import { pilotSchema, type PilotRecord } from './pilot-schema';

export interface Violation {
  /** JSON Pointer of the offending value, e.g. `/scope/class_codes`. */
  path: string;
  message: string;
}

let compiled: ValidateFunction<PilotRecord> | undefined;

/**
 * Loaded and compiled at the first pilot record, not at start-up: ajv and the
 * compiled schema cost about 0.2 s of start-up time, which a server
 * that never sees a pilot record does not need to pay.
 */
function validator(): ValidateFunction<PilotRecord> {
  if (compiled === undefined) {
    // Loaded on first use, so that a server that never sees a pilot record starts without ajv.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { default: Ajv2020 } = require('ajv/dist/2020') as typeof import('ajv/dist/2020');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { default: addFormats } = require('ajv-formats') as typeof import('ajv-formats');
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormats(ajv, ['date']);
    compiled = ajv.compile<PilotRecord>(pilotSchema);
  }
  return compiled;
}

function describe(error: ErrorObject): Violation {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${error.instancePath}/${String(params.additionalProperty)}`, message: 'is not allowed here' };
    case 'type':
      return {
        path: error.instancePath,
        message: `must be ${params.type === 'integer' ? 'a whole number' : `of type ${String(params.type)}`}`,
      };
    case 'format':
      return { path: error.instancePath, message: 'must be a calendar date (YYYY-MM-DD)' };
    case 'pattern':
      return { path: error.instancePath, message: 'must be 7 to 40 lowercase hexadecimal characters' };
    case 'minimum':
      return { path: error.instancePath, message: `must be at least ${String(params.limit)}` };
    case 'minLength':
      return { path: error.instancePath, message: `must have at least ${String(params.limit)} characters` };
    case 'minItems':
      return {
        path: error.instancePath,
        message: `must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`,
      };
    case 'enum':
      return { path: error.instancePath, message: `must be one of ${(params.allowedValues as string[]).join(', ')}` };
    default:
      return { path: error.instancePath, message: error.message ?? 'is invalid' };
  }
}

export function validatePilot(
  record: unknown,
): { ok: true; record: PilotRecord } | { ok: false; violations: Violation[] } {
  const validate = validator();
  if (validate(record)) return { ok: true, record };
  const violations = (validate.errors ?? []).map(describe).map((v) => ({ ...v, path: v.path === '' ? '/' : v.path }));
  return { ok: false, violations };
}
