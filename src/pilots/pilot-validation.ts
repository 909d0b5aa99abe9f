/**
 * Validates a pilot record against its schema with ajv: every violation at
 * once, each with its JSON path and a message in plain words.
 */
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { pilotSchema, type PilotRecord } from './pilot-schema';

export interface Violation {
  /** JSON Pointer of the offending value, e.g. `/scope/class_codes`. */
  path: string;
  message: string;
}

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv, ['date']);
const validate = ajv.compile<PilotRecord>(pilotSchema);

function describe(error: ErrorObject): Violation {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' };
    case 'additionalProperties':
      return { path: `${error.instancePath}/${String(params.additionalProperty)}`, message: 'is not allowed here' };
    case 'type':
      return { path: error.instancePath, message: `must be ${params.type === 'integer' ? 'a whole number' : `of type ${String(params.type)}`}` };
    case 'format':
      return { path: error.instancePath, message: 'must be a calendar date (YYYY-MM-DD)' };
    case 'pattern':
      return { path: error.instancePath, message: 'must be 7 to 40 lowercase hexadecimal characters' };
    case 'minimum':
      return { path: error.instancePath, message: `must be at least ${String(params.limit)}` };
    case 'minLength':
      return { path: error.instancePath, message: `must have at least ${String(params.limit)} characters` };
    case 'minItems':
      return { path: error.instancePath, message: `must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}` };
    case 'enum':
      return { path: error.instancePath, message: `must be one of ${(params.allowedValues as string[]).join(', ')}` };
    default:
      return { path: error.instancePath, message: error.message ?? 'is invalid' };
  }
}

export function validatePilot(record: unknown): { ok: true; record: PilotRecord } | { ok: false; violations: Violation[] } {
  if (validate(record)) return { ok: true, record };
  const violations = (validate.errors ?? []).map(describe).map((v) => ({ ...v, path: v.path === '' ? '/' : v.path }));
  return { ok: false, violations };
}
