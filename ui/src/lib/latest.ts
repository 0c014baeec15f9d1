// Runs an async job so that at most one is in flight and the last request
// always wins: a slider dragged through 50 values causes at most two
// requests in flight order, never a stale result drawn over a newer one.
// `drop()` forgets what is pending and in flight, for when what they were
// asked for is gone (another project opened, the question cleared): their
// answers would otherwise be drawn over a view that never asked for them.
// `superseded(running, next)` hears of a request in flight that a newer one
// (`next`; `null` for a drop) has made moot, so its caller can ask the
// backend to stop it rather than wait for an answer nobody will draw.

export type Latest<A> = ((args: A) => void) & { drop: () => void };

export function latestOnly<A, R>(
  run: (args: A) => Promise<R>,
  onResult: (result: R) => void,
  onError: (error: unknown) => void,
  superseded?: (running: A, next: A | null) => void,
): Latest<A> {
  let running: { args: A } | null = null;
  let pending: { args: A } | null = null;
  let epoch = 0;
  const request = (args: A) => {
    pending = { args };
    if (running) {
      superseded?.(running.args, args);
      return;
    }
    void (async () => {
      while (pending) {
        const next = pending;
        pending = null;
        running = next;
        const asked = epoch;
        try {
          const result = await run(next.args);
          if (!pending && asked === epoch) onResult(result);
        } catch (e) {
          if (!pending && asked === epoch) onError(e);
        }
      }
      running = null;
    })();
  };
  return Object.assign(request, {
    drop: () => {
      pending = null;
      epoch += 1;
      if (running) superseded?.(running.args, null);
    },
  });
}
