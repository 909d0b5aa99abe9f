/** class-activity: the teacher's view of the class, from the journal's summaries and each database's template, and the requests refused. */
import { ADMIN_PRINCIPAL } from '../../access/principal';
import type { EngineHost } from '../../engine/protocol';
import type { ClassActivity } from '../../services/class-activity';
import type { DatabaseDirectory } from '../../services/databases/database-directory';
import type { TokenRegistry } from '../../tokens/token-registry';
import type { Attributed, ClassDatabase } from '../commands';
import type { Handlers } from '../command-bus';

export interface ClassHandlerDeps {
  readonly directory: DatabaseDirectory;
  readonly activity: ClassActivity;
  readonly engine: EngineHost;
  readonly tokens: TokenRegistry;
}

/** Marks what a token no longer the server's (revoked) did; a token-less entry, or the -token admin's, is no former one's. */
function attribution(tokens: TokenRegistry): <T extends { tokenId: string | null }>(item: T) => Attributed<T> {
  const known = new Set([ADMIN_PRINCIPAL.id, ...tokens.list().map((token) => token.id)]);
  return (item) => ({ ...item, former: item.tokenId !== null && !known.has(item.tokenId) });
}

/** The template a copy records; none when it was not made from one or cannot be read now (it is then not offered a reset). */
async function templateOf(engine: EngineHost, file: string): Promise<string | undefined> {
  try {
    return (await engine.journalPosition(file)).template;
  } catch {
    return undefined;
  }
}

export function classHandlers({
  directory,
  activity,
  engine,
  tokens,
}: ClassHandlerDeps): Pick<Handlers, 'class-activity'> {
  return {
    'class-activity': async () => {
      const summaries = await activity.activity();
      const attributed = attribution(tokens);
      const databases = await Promise.all(
        directory.list().map(async (db): Promise<ClassDatabase> => {
          const summary = summaries.get(db);
          const template = await templateOf(engine, directory.refOf(db).file);
          const seen =
            summary === undefined
              ? { db, lastActivity: null, entries: 0, recentErrors: [] }
              : { ...summary, recentErrors: [...summary.recentErrors].reverse().map(attributed) };
          return template === undefined ? seen : { ...seen, template };
        }),
      );
      return { databases, refused: (await activity.refusals()).map(attributed) };
    },
  };
}
