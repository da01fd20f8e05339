/** What the model wants to know about each HTTP exchange, which the SDK does not tell it. */
export interface FetchObserver {
  /** Headers or any bytes arrived (SSE `:` keep-alive comments included): the idle timer restarts. */
  onActivity(): void;
  /** The raw body of a non-2xx response; the SDK keeps only `error`, dropping e.g. vLLM's top-level `message`. */
  onErrorBody(text: string): void;
}

type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` for the openai SDK that reports activity and keeps error bodies. The response is otherwise passed
 * through unchanged (same status, headers and bytes), so the SDK parses it exactly as it would.
 */
export function observedFetch(observer: FetchObserver, baseFetch: FetchFunction = globalThis.fetch): FetchFunction {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    observer.onActivity();
    const init2: ResponseInit = { status: response.status, statusText: response.statusText, headers: response.headers };
    if (!response.ok) {
      const text = await response.text();
      observer.onErrorBody(text);
      return new Response(text, init2);
    }
    if (!response.body) return response;
    const watched = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          observer.onActivity();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(watched, init2);
  };
}
