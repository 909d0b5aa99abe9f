/** create-pilot, get-pilot, list-pilots, summarize-pilots: classroom pilot records. */
import type { PilotService } from '../../pilots/pilot-service';
import type { Handlers } from '../command-bus';

export function pilotHandlers(
  pilots: PilotService,
): Pick<Handlers, 'create-pilot' | 'get-pilot' | 'list-pilots' | 'summarize-pilots'> {
  return {
    'create-pilot': ({ record }, call) => pilots.create(record, call.principal),
    'get-pilot': ({ id }) => pilots.get(id),
    'list-pilots': ({ filter, limit, offset }) => pilots.list(filter, limit, offset),
    'summarize-pilots': ({ groupBy }) => pilots.summary(groupBy),
  };
}
