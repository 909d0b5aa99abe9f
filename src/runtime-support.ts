/**
 * Which Node.js runs sqlscribe. better-sqlite3 13 is built for Node-API 10,
 * which Node has from 22.14 on (never in the 20 line); an older Node does not
 * refuse to load it but crashes at the first database it opens. So the
 * entry points ask first, and an older Node gets one clear line instead.
 */

/** The oldest Node-API the engine's binary asks for. */
export const REQUIRED_NODE_API = 10;

/** Why this Node cannot run sqlscribe, or null when it can. */
export function runtimeRefusal(versions: { node: string; napi?: string | undefined }): string | null {
  const napi = Number(versions.napi ?? 0);
  if (napi >= REQUIRED_NODE_API) return null;
  return `Node.js ${versions.node} is too old (Node-API ${napi || 'unknown'}; the SQLite engine needs ${REQUIRED_NODE_API}): use Node.js 24 LTS, or 22.14 at least`;
}
