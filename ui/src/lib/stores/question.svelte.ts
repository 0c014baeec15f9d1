// The question box: what is typed, what is asked (typing is debounced;
// sliders and other knobs are not), `@` completions and Ctrl+K.

import type { CompletionDto } from '../backend';
import type { Loupe } from './loupe.svelte';

/** Typing is debounced; sliders and other knobs are not. */
const QUESTION_DEBOUNCE_MS = 250;
/** `@` suggestions asked for. */
const COMPLETION_LIMIT = 8;

export class QuestionStore {
  private readonly app: Loupe;
  /** The box's text. */
  draft = $state('');
  /** The question asked: the box's text once the debounce let it through. */
  text = $state('');
  /** The box, to focus. */
  box = $state<{ focus: () => void } | null>(null);
  private debounce: ReturnType<typeof setTimeout> | undefined;

  constructor(app: Loupe) {
    this.app = app;
  }

  /** Ask `text`. Type and intent overrides belong to one question: a new
   * question goes back to the project's defaults for them. */
  private set(text: string) {
    if (text.trim() !== this.text.trim()) this.app.knobs.resetOverrides();
    this.text = text;
  }

  /** The box's text changed by typing. */
  input = () => {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.set(this.draft), QUESTION_DEBOUNCE_MS);
  };

  /** Enter: asked now. */
  submit = () => {
    clearTimeout(this.debounce);
    this.set(this.draft);
  };

  /** Put `text` in the box and ask it (a golden question's Ask). */
  ask = (text: string) => {
    this.draft = text;
    this.set(text);
  };

  /** Typing still waiting for its debounce is not asked. */
  cancelTyping() {
    clearTimeout(this.debounce);
  }

  /** The box's text is asked at once (another project is shown). */
  takeDraft() {
    clearTimeout(this.debounce);
    this.text = this.draft;
  }

  /** Files and symbols completing an `@` mention. */
  complete = (typed: string): Promise<CompletionDto[]> => {
    const { backend } = this.app;
    const status = this.app.project.status;
    if (!backend || !status) return Promise.resolve([]);
    return backend.complete(status.root, typed, COMPLETION_LIMIT);
  };

  /** Ctrl+K (⌘K) focuses the box. */
  onWindowKey = (e: KeyboardEvent) => {
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      this.box?.focus();
    }
  };
}
