/**
 * The command bus: the one way from the HTTP layer to the databases. Routes
 * dispatch typed commands; each command type has exactly one handler (the
 * compiler checks the table is complete); every dispatch passes through the
 * same short chain of middleware, outermost first, before its handler runs.
 * What each handler needs is decided in one place, src/startup/compose.ts.
 */
import type { CallContext } from '../engine/protocol';
import type { Command, CommandOf, CommandResults, CommandType } from './commands';

/** Runs one command type. */
export type Handler<T extends CommandType> = (
  command: CommandOf<T>,
  call: CallContext,
) => Promise<CommandResults[T]> | CommandResults[T];

/** One handler per command type, no more, no fewer. */
export type Handlers = { readonly [T in CommandType]: Handler<T> };

/** Wraps every dispatch: may look at the command, refuse it, time it, or note its failure. */
export type Middleware = (command: Command, call: CallContext, next: () => Promise<unknown>) => Promise<unknown>;

export class CommandBus {
  constructor(
    private readonly handlers: Handlers,
    private readonly middleware: readonly Middleware[],
    private readonly onClose: () => Promise<void>,
  ) {}

  dispatch<T extends CommandType>(command: CommandOf<T>, call: CallContext = {}): Promise<CommandResults[T]> {
    const run = (index: number): Promise<unknown> => {
      const layer = this.middleware[index];
      if (layer === undefined) return Promise.resolve(this.handle(command, call));
      return layer(command, call, () => run(index + 1));
    };
    return run(0) as Promise<CommandResults[T]>;
  }

  private handle<T extends CommandType>(
    command: CommandOf<T>,
    call: CallContext,
  ): Promise<CommandResults[T]> | CommandResults[T] {
    const handler = this.handlers[command.type] as Handler<T>;
    return handler(command, call);
  }

  /** Ends open sessions and stops the engine processes. */
  close(): Promise<void> {
    return this.onClose();
  }
}
