/** Assertions and small helpers the HTTP suites share. */
import type { Test } from 'tap';
import type { Reply } from './server';
import { OptionsError } from '../../src/config/options-values';
import { EngineError } from '../../src/errors';

/**
 * The reply is an engine error: this status, `ok: false`, one of these
 * codes, and an error text that starts with its bracketed code.
 */
export function isError(tt: Test, reply: Reply, status: number, code: number | number[], label: string): void {
  const codes = Array.isArray(code) ? code : [code];
  tt.equal(reply.status, status, `${label}: status (${reply.text.slice(0, 300)})`);
  tt.equal(reply.body?.ok, false, `${label}: ok false`);
  tt.ok(codes.includes(reply.body?.code), `${label}: code ${reply.body?.code} is one of ${codes.join(', ')}`);
  tt.ok(String(reply.body?.error).startsWith(`[SQ${reply.body?.code}]`), `${label}: error starts with its code`);
}

/** The message of the OptionsError `run` throws (a command line refused); fails when it throws none. */
export function optionsMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof OptionsError) return error.message;
    throw error;
  }
  throw new Error('expected an OptionsError');
}

/** The reply is this status (its text shown when not) and this engine code. */
export function assertCode(t: Test, reply: Reply, status: number, code: number, what: string): void {
  t.equal(reply.status, status, `${what}: ${status} (${reply.text.slice(0, 200)})`);
  t.equal(reply.body?.code, code, `${what}: [SQ${code}]`);
}

/** The code of the EngineError `fn` throws: null when it throws none, -1 when it throws something else. */
export function engineCodeOf(fn: () => unknown): number | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof EngineError ? error.code : -1;
  }
}
