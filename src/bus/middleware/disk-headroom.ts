/**
 * Below -min-free-disk-mb of free space on the data directory's disk, every
 * command that writes is refused for tokens that are not admins, before it
 * runs (507 DISK_HEADROOM): the space left is the journal's, for its own
 * entries and for an admin's cleanup (dropping a database, deleting rows,
 * restoring), which go on. A session may still be rolled back: that frees
 * its database. A server without tokens has no roles, so nothing is refused.
 */
import { hasRole } from '../../access/principal';
import type { DiskHeadroom } from '../../services/disk-headroom';
import type { Middleware } from '../command-bus';
import { writeOf } from '../command-rules';

export function refuseBelowHeadroom(headroom: DiskHeadroom): Middleware {
  return async function belowHeadroom(command, call, next) {
    const principal = call.principal;
    if (!headroom.enabled || principal === undefined || hasRole(principal, 'admin')) return next();
    if (writeOf(command) === null) return next();
    if (command.type === 'end-session' && !command.commit) return next();
    await headroom.assertRoom();
    return next();
  };
}
