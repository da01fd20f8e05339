/**
 * A loader that runs `load` (a dynamic `import()` of a provider's request code and its SDK) on its first call, so
 * `import "statecraft"` never loads it, and shares that one load with every later call. A failed load is forgotten:
 * the next call tries again (say, once the missing package is installed).
 */
export function loadOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
