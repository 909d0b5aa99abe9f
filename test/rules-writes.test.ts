/**
 * The command rules at work in the bus: on a replica every command whose
 * row says it writes is refused before its handler, every other one runs;
 * /exec's batch, parsed before dispatch, decides for it in the middleware,
 * so a batch that writes never reaches the handler of a replica, and a read
 * token's write is refused there too.
 */
import t from 'tap';
import { CommandBus, type Handlers, type Middleware } from '../src/bus/command-bus';
import { COMMAND_RULES } from '../src/bus/command-rules';
import type { Command, CommandType } from '../src/bus/commands';
import { authorize } from '../src/bus/middleware/authorize';
import { writesOnPrimary } from '../src/bus/middleware/writes-on-primary';
import { isRefused, parseOrRefuse } from '../src/engine/batch';
import { EngineError } from '../src/errors';
import type { Principal } from '../src/access/principal';
import type { DatabaseDirectory } from '../src/services/databases/database-directory';
import { ServerRoleState } from '../src/services/server-role';

const TYPES = Object.keys(COMMAND_RULES) as CommandType[];

/** Every handler records that it ran and answers nothing. */
function recordingHandlers(ran: string[]): Handlers {
  return Object.fromEntries(TYPES.map((type) => [type, () => void ran.push(type)])) as unknown as Handlers;
}

function replica(): ServerRoleState {
  const role = new ServerRoleState('primary');
  role.becomeReplica();
  role.following('http://primary.test');
  return role;
}

/** A command of each type; only exec's content matters to the rules. */
function commandOf(type: CommandType, sql = 'SELECT 1'): Command {
  if (type === 'exec') {
    const sources = [{ sql }];
    return { type, db: 'shop', sources, batch: parseOrRefuse(sources, 100) };
  }
  return { type, db: 'shop' } as unknown as Command;
}

async function outcome(bus: CommandBus, command: Command, call = {}): Promise<string> {
  try {
    await bus.dispatch(command as never, call);
    return 'ran';
  } catch (error) {
    return error instanceof EngineError ? error.errorName : String(error);
  }
}

t.test('a replica refuses exactly the commands whose row says they write', async (t) => {
  const ran: string[] = [];
  const bus = new CommandBus(recordingHandlers(ran), [writesOnPrimary(replica())], async () => undefined);
  const writing = TYPES.filter((type) => type !== 'exec' && COMMAND_RULES[type].writes !== null);
  t.ok(
    writing.includes('create-database') && writing.includes('check-exercise') && writing.includes('end-session'),
    'the table marks writes',
  );
  for (const type of TYPES) {
    if (type === 'exec') continue;
    const writes = COMMAND_RULES[type].writes !== null;
    t.equal(
      await outcome(bus, commandOf(type)),
      writes ? 'READ_ONLY_REPLICA' : 'ran',
      `${type}: ${writes ? 'refused' : 'runs'}`,
    );
  }
  t.same(
    ran,
    TYPES.filter((type) => type !== 'exec' && !writing.includes(type)),
    'no writing handler ran',
  );
});

t.test('a replaced primary refuses writes naming the new one; a standalone server runs all', async (t) => {
  const fenced = new ServerRoleState('primary');
  fenced.fenced({ node: 'b', epoch: 2, url: 'http://b.test' });
  const ran: string[] = [];
  const fencedBus = new CommandBus(recordingHandlers(ran), [writesOnPrimary(fenced)], async () => undefined);
  t.equal(await outcome(fencedBus, commandOf('create-database')), 'NOT_PRIMARY');
  t.equal(await outcome(fencedBus, commandOf('exec', 'INSERT INTO t VALUES (1)')), 'NOT_PRIMARY');
  const standalone = new CommandBus(
    recordingHandlers(ran),
    [writesOnPrimary(new ServerRoleState('standalone'))],
    async () => undefined,
  );
  for (const type of TYPES)
    t.equal(await outcome(standalone, commandOf(type, 'DELETE FROM t')), 'ran', `${type} runs on a standalone server`);
});

t.test('exec: the parsed batch decides in the middleware, before the handler', async (t) => {
  const ran: string[] = [];
  const bus = new CommandBus(recordingHandlers(ran), [writesOnPrimary(replica())], async () => undefined);
  t.ok(isRefused(parseOrRefuse([{ sql: 'SELEC 1 +' }], 100)), "the test's bad SQL is refused by the parser");
  t.equal(await outcome(bus, commandOf('exec', 'SELECT 1; SELECT 2')), 'ran', 'a batch that reads runs on a replica');
  t.equal(
    await outcome(bus, commandOf('exec', 'SELECT 1; UPDATE t SET x = 1')),
    'READ_ONLY_REPLICA',
    'a batch that writes is refused',
  );
  t.equal(
    await outcome(bus, commandOf('exec', 'CREATE DATABASE other')),
    'READ_ONLY_REPLICA',
    'so is creating a database',
  );
  t.equal(
    await outcome(bus, commandOf('exec', 'SELEC 1 +')),
    'ran',
    'SQL that cannot be parsed goes on to the handler, which answers and journals it',
  );
  t.same(ran, ['exec', 'exec'], 'the handler ran for the read and the unparseable batch only');
});

t.test(
  "exec: a read token's batch that writes is refused by authorize, before the replica check and the handler",
  async (t) => {
    const reader: Principal = { id: 'r', name: 'reader', role: 'read', databases: ['shop'] };
    const directory = { single: false } as DatabaseDirectory;
    const seen: string[] = [];
    const after: Middleware = async (command, _call, next) => {
      seen.push(command.type);
      return next();
    };
    const ran: string[] = [];
    const bus = new CommandBus(
      recordingHandlers(ran),
      [authorize(directory), after, writesOnPrimary(replica())],
      async () => undefined,
    );
    t.equal(
      await outcome(bus, commandOf('exec', 'INSERT INTO t VALUES (1)'), { principal: reader }),
      'READ_TOKEN_WRITES',
    );
    t.same(seen, [], 'no later middleware saw it');
    t.equal(await outcome(bus, commandOf('exec', 'SELECT 1'), { principal: reader }), 'ran', 'its reads run');
    t.equal(
      await outcome(bus, commandOf('exec', 'SELEC 1 +'), { principal: reader }),
      'ran',
      'its unparseable SQL reaches the handler',
    );
    const stranger: Principal = { id: 's', name: 'stranger', role: 'read', databases: ['other'] };
    t.equal(
      await outcome(bus, commandOf('exec', 'SELEC 1 +'), { principal: stranger }),
      'DATABASE_FORBIDDEN',
      'a token that may not touch the database learns nothing of its SQL',
    );
    t.same(ran, ['exec', 'exec']);
  },
);
