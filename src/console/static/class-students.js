// @ts-check
// Who works in each database of the class: a class of tokens (POST /tokens
// with a prefix) binds each student's token to the database of its own name,
// so the Class view can list students by name and open a student's history
// filtered to that token. Asked of GET /tokens (admin); a server without
// tokens has no names, and the databases stand for themselves.

import { api } from './api.js';

/**
 * Database (bare name) → the names of the non-admin tokens bound to exactly that database.
 * @returns {Promise<Map<string, string[]>>}
 */
export async function studentsByDatabase() {
  /** @type {Map<string, string[]>} */
  const byDb = new Map();
  /** @type {any[]} */
  let tokens = [];
  try {
    tokens = (await api('GET', '/tokens')).tokens ?? [];
  } catch {
    // 403 [SQ1033] on a server without tokens (the Class view then needs -journal-feed): no names.
    return byDb;
  }
  for (const token of tokens) {
    if (token.role === 'admin' || !Array.isArray(token.databases) || token.databases.length !== 1) continue;
    const db = String(token.databases[0]).replace(/\.db$/, '');
    if (db.includes('*')) continue;
    byDb.set(db, [...(byDb.get(db) ?? []), token.name]);
  }
  return byDb;
}

/**
 * Names in the order a class list is read: alumno-2 before alumno-10.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function byName(a, b) {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' });
}
