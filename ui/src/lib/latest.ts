// Runs an async job so that at most one is in flight and the last request
// always wins: a slider dragged through 50 values causes at most two
// requests in flight order, never a stale result drawn over a newer one.

export function latestOnly<A, R>(
  run: (args: A) => Promise<R>,
  onResult: (result: R) => void,
  onError: (error: unknown) => void,
): (args: A) => void {
  let running = false;
  let pending: { args: A } | null = null;
  return (args: A) => {
    pending = { args };
    if (running) return;
    running = true;
    void (async () => {
      while (pending) {
        const next = pending;
        pending = null;
        try {
          const result = await run(next.args);
          if (!pending) onResult(result);
        } catch (e) {
          if (!pending) onError(e);
        }
      }
      running = false;
    })();
  };
}
