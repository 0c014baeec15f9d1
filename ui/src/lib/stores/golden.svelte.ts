// The golden questions' panel: while it is open, every knob, pin or index
// change re-runs the project's golden questions (.loupe/golden.toml).

import { BackendError, type GoldenRunDto, type KnobsDto } from '../backend';
import { latestOnly } from '../latest';
import type { Loupe } from './loupe.svelte';

export class GoldenStore {
  private readonly app: Loupe;
  open = $state(false);
  /** The last run (`null` until the first one is back). */
  run = $state<GoldenRunDto | null>(null);
  error = $state<string | null>(null);
  /** The last run found fewer items than expected. */
  failing = $derived(this.run !== null && this.run.present && this.run.found < this.run.expected);

  private readonly request = latestOnly(
    (args: { root: string; knobs: KnobsDto }) => {
      const { backend } = this.app;
      if (!backend) return Promise.reject(new BackendError('engine', 'no backend'));
      return backend.goldenRun(args.root, args.knobs);
    },
    (result) => {
      this.run = result;
      this.error = null;
    },
    (e) => {
      this.error = BackendError.from(e).message;
    },
  );

  constructor(app: Loupe) {
    this.app = app;
    // While the panel is open, every knob, pin or index change re-runs the
    // golden questions (their retrieval is cached: only assembly re-runs).
    $effect(() => {
      const { project, knobs } = app;
      if (!this.open || !project.status || !knobs.values) return;
      void app.version;
      this.request({ root: project.status.root, knobs: $state.snapshot(knobs.values) });
    });
  }

  toggle = () => {
    this.open = !this.open;
  };

  /** Ask one of the questions in the main panel. */
  ask = (question: string) => {
    this.app.question.ask(question);
  };

  /** Another project: its own questions, run afresh. */
  clear() {
    this.request.drop();
    this.run = null;
    this.error = null;
  }
}
