/**
 * Counts and times every command by type and outcome: 'ok', the class of the
 * engine error it ended with ('class3' for a constraint violation), or
 * 'fault' for anything else. Classes, not codes, keep the label set small.
 */
import { EngineError } from '../../errors';
import type { Middleware } from '../command-bus';
import type { CommandType } from '../commands';

export interface CommandObserver {
  command(type: CommandType, outcome: string, seconds: number): void;
}

export function outcomeOf(error: unknown): string {
  return error instanceof EngineError ? `class${Math.floor(error.code / 1000)}` : 'fault';
}

export function commandMetrics(observer: CommandObserver, now: () => number = () => performance.now()): Middleware {
  return async (command, _call, next) => {
    const started = now();
    try {
      const result = await next();
      observer.command(command.type, 'ok', (now() - started) / 1000);
      return result;
    } catch (error) {
      observer.command(command.type, outcomeOf(error), (now() - started) / 1000);
      throw error;
    }
  };
}
