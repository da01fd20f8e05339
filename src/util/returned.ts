/** A promise settled from outside, once. Its rejection counts as handled: nobody has to await it. */
export interface Returned<R> {
  readonly promise: Promise<R>;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export function returned<R>(): Returned<R> {
  let resolve!: (value: R) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<R>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  // Marks the promise handled: a run whose caller never reads `result` must not crash the process when it fails.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Settles `into` as the generator ends: with its return value, with what it threw, or with `stoppedEarly()` when the
 * consumer stopped it (`return()`, a `break` out of `for await`) before it returned a value. The generator's own
 * methods are wrapped in place, so it stays the object callers hold; each step is watched beside the caller, not in
 * its way: the caller gets the generator's own promise, in the same tick (a run's output keeps its order with what
 * the run prints meanwhile, e.g. a permission question).
 */
export function settleOnReturn<Y, R>(generator: AsyncGenerator<Y, R, undefined>, into: Returned<R>, stoppedEarly: () => unknown): void {
  // One pair of handlers for every step (a run's generator takes about ten steps per tool call).
  const settled = (result: IteratorResult<Y, R>) => {
    if (!result.done) return;
    if (result.value === undefined) into.reject(stoppedEarly());
    else into.resolve(result.value);
  };
  const failed = (error: unknown) => into.reject(error);
  const watch = (step: Promise<IteratorResult<Y, R>>) => {
    step.then(settled, failed);
    return step;
  };
  const next = generator.next.bind(generator);
  const stop = generator.return.bind(generator);
  const fail = generator.throw.bind(generator);
  generator.next = (...args) => watch(next(...args));
  generator.return = (value) => watch(stop(value));
  generator.throw = (error) => watch(fail(error));
}
