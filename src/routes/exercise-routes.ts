/**
 * The exercises: GET/POST /exercises, GET/PUT/DELETE /exercises/{id},
 * GET /exercises/{id}/tables, POST /exercises/{id}/check, and the teacher's
 * GET /exercises/progress (JSON or CSV) and /exercises/evidence.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandBus } from '../bus/command-bus';
import { EngineError } from '../errors';
import { callOf } from '../http/bookkeeping/request-deadline';
import { sendJson } from '../http/respond';
import { STUDENTS_SHOWN, type ClassQuery, type ProgressReport, type StudentsShown } from '../exercises/exercise-types';
import { STUCK_ATTEMPTS, STUCK_MINUTES } from '../exercises/exercise-progress';
import { queryValue } from './request/query';

function positiveQueryValue(ctx: Context, name: string, fallback: number): number {
  const value = queryValue(ctx, name);
  if (value === undefined) return fallback;
  if (!/^\d{1,6}$/.test(value) || Number(value) === 0)
    throw new EngineError('INVALID_QUERY_PARAMETER', { name, detail: 'expected a positive integer' });
  return Number(value);
}

/** `?students=current` (the default) or `all` (former students too). */
function studentsShown(ctx: Context): StudentsShown | undefined {
  const value = queryValue(ctx, 'students');
  if (value === undefined || (STUDENTS_SHOWN as readonly string[]).includes(value))
    return value as StudentsShown | undefined;
  throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'students', detail: 'expected current or all' });
}

/**
 * `?set=`, `?token=` (a glob of names), `?students=`, `?stuck_attempts=`,
 * `?stuck_minutes=` and `?at=` (an ISO time: when "stuck" is judged).
 */
function classQuery(ctx: Context): ClassQuery {
  const set = queryValue(ctx, 'set');
  const tokens = queryValue(ctx, 'token');
  if (tokens !== undefined && !/^[A-Za-z0-9_*.-]{1,64}$/.test(tokens))
    throw new EngineError('INVALID_QUERY_PARAMETER', {
      name: 'token',
      detail: 'expected a token name, * standing for any characters (clase-*)',
    });
  const atText = queryValue(ctx, 'at');
  const at = atText === undefined ? undefined : Date.parse(atText);
  if (at !== undefined && Number.isNaN(at))
    throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'at', detail: 'expected an ISO time' });
  const students = studentsShown(ctx);
  const stuck = {
    attempts: positiveQueryValue(ctx, 'stuck_attempts', STUCK_ATTEMPTS),
    minutes: positiveQueryValue(ctx, 'stuck_minutes', STUCK_MINUTES),
  };
  return {
    ...(set === undefined ? {} : { set }),
    ...(tokens === undefined ? {} : { tokens }),
    ...(students === undefined ? {} : { students }),
    ...(at === undefined ? {} : { at }),
    stuck,
  };
}

function wantsCsv(ctx: Context): boolean {
  const format = queryValue(ctx, 'format');
  if (format !== undefined && format !== 'csv' && format !== 'json')
    throw new EngineError('INVALID_QUERY_PARAMETER', { name: 'format', detail: 'expected csv or json' });
  return format === 'csv' || (format === undefined && ctx.get('Accept').includes('text/csv'));
}

function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A gradebook: one line per student, 1 for solved, 0 for tried and not
 * solved, empty for not tried. A former student's name (only with
 * ?students=all) says so, since this term's student may bear it too.
 */
function progressCsv(report: ProgressReport): string {
  const header = ['token', 'solved', 'attempts', ...report.exercises.map((exercise) => exercise.id)];
  const lines = report.students.map((student) => [
    student.former ? `${student.token} (former)` : student.token,
    String(student.solved),
    String(student.attempts),
    ...student.exercises.map((cell) => (cell.solved ? '1' : cell.attempts > 0 ? '0' : '')),
  ]);
  return `${[header, ...lines].map((line) => line.map(csvField).join(',')).join('\r\n')}\r\n`;
}

export function exerciseRoutes(router: Router, bus: CommandBus): void {
  router.get('/exercises/progress', async (ctx) => {
    const csv = wantsCsv(ctx);
    const report = await bus.dispatch({ type: 'exercise-progress', query: classQuery(ctx) }, callOf(ctx));
    if (!csv) return sendJson(ctx, 200, { ok: true, ...report });
    ctx.status = 200;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="progress${report.set === null ? '' : `-${report.set}`}.csv"`);
    ctx.body = progressCsv(report);
  });

  router.get('/exercises/evidence', async (ctx) => {
    const thresholds = {
      en_desarrollo: queryValue(ctx, 'en_desarrollo'),
      logrado: queryValue(ctx, 'logrado'),
      profundizado: queryValue(ctx, 'profundizado'),
    };
    const report = await bus.dispatch({ type: 'exercise-evidence', query: classQuery(ctx), thresholds }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...report });
  });

  router.get('/exercises/mine', async (ctx) => {
    const set = queryValue(ctx, 'set');
    const own = await bus.dispatch(
      set === undefined ? { type: 'own-progress' } : { type: 'own-progress', set },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, ...own });
  });

  router.get('/exercises', async (ctx) => {
    const set = queryValue(ctx, 'set');
    const { exercises } = await bus.dispatch(
      set === undefined ? { type: 'list-exercises' } : { type: 'list-exercises', set },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, exercises });
  });

  router.post('/exercises', async (ctx) => {
    const exercise = await bus.dispatch({ type: 'create-exercise', body: ctx.request.body }, callOf(ctx));
    sendJson(ctx, 201, { ok: true, exercise });
  });

  router.get('/exercises/:id', async (ctx) => {
    const exercise = await bus.dispatch({ type: 'get-exercise', id: ctx.params.id }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, exercise });
  });

  router.put('/exercises/:id', async (ctx) => {
    const exercise = await bus.dispatch(
      { type: 'replace-exercise', id: ctx.params.id, body: ctx.request.body },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, exercise });
  });

  router.delete('/exercises/:id', async (ctx) => {
    const { id } = await bus.dispatch({ type: 'delete-exercise', id: ctx.params.id }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, id });
  });

  router.get('/exercises/:id/tables', async (ctx) => {
    const answer = await bus.dispatch({ type: 'exercise-tables', id: ctx.params.id }, callOf(ctx));
    sendJson(ctx, 200, { ok: true, ...answer });
  });

  router.post('/exercises/:id/check', async (ctx) => {
    const outcome = await bus.dispatch(
      { type: 'check-exercise', id: ctx.params.id, body: ctx.request.body },
      callOf(ctx),
    );
    sendJson(ctx, 200, { ok: true, ...outcome });
  });
}
