/** True when the caller's abort signal has fired. */
export function aborted(context: { deps: { signal?: AbortSignal } }): boolean {
  return context.deps.signal?.aborted === true;
}
