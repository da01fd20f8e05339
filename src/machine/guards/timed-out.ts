/** True once the run's deadline (start + timeoutMs) has passed. */
export function timedOut(context: { deadline: number }, now: number = Date.now()): boolean {
  return now >= context.deadline;
}
