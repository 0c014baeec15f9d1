// Change-review mode: which diff the answer reviews (the Changes switch).

import { changeArg, type Changes } from '../components/ChangesSwitch.svelte';
import type { Loupe } from './loupe.svelte';

const OFF: Changes = { on: false, spec: 'unstaged', range: '' };

export class ChangesStore {
  private readonly app: Loupe;
  /** Review a change instead of (or as well as) a question. */
  value = $state<Changes>({ ...OFF });
  /** The diff the last answer reviewed. */
  summary = $derived.by(() => this.app.assembly.result?.change ?? null);
  /** An agent's call is shown: its own change applies. */
  locked = $derived.by(() => this.app.agents.view !== null);

  constructor(app: Loupe) {
    this.app = app;
  }

  /** The `change` an answer is asked with (`null`: none). */
  get arg(): string | null {
    return changeArg(this.value);
  }

  /** Another project: back to its question alone. */
  clear() {
    this.value = { ...OFF };
  }
}
