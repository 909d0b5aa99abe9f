/**
 * Which answers are the server's own fault. A 4xx is the client's request; a
 * 503 (overload, not ready yet, a busy write lock, a journal that cannot be
 * written for now) is the service protecting itself and telling the client to
 * retry. Neither should wake anyone: only the rest of the 5xx are logged with
 * their stack and counted in faults_total (errors_total counts every 5xx).
 */
export function isServerFault(status: number): boolean {
  return status >= 500 && status !== 503;
}
