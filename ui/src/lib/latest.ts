// Runs an async job so that at most one is in flight and the last request
// always wins: a slider dragged through 50 values causes at most two
// requests in flight order, never a stale result drawn over a newer one.
// `drop()` forgets what is pending and in flight, for when what they were
// asked for is gone (another project opened, the question cleared): their
// answers would otherwise be drawn over a view that never asked for them.

export type Latest<A> = ((args: A) => void) & { drop: () => void };

export function latestOnly<A, R>(
  run: (args: A) => Promise<R>,
  onResult: (result: R) => void,
  onError: (error: unknown) => void,
): Latest<A> {
  let running = false;
  let pending: { args: A } | null = null;
  let epoch = 0;
  const request = (args: A) => {
    pending = { args };
    if (running) return;
    running = true;
    void (async () => {
      while (pending) {
        const next = pending;
        pending = null;
        const asked = epoch;
        try {
          const result = await run(next.args);
          if (!pending && asked === epoch) onResult(result);
        } catch (e) {
          if (!pending && asked === epoch) onError(e);
        }
      }
      running = false;
    })();
  };
  return Object.assign(request, {
    drop: () => {
      pending = null;
      epoch += 1;
    },
  });
}
