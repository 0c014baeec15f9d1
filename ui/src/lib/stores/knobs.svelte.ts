// The knobs: their values on screen and their persistence per project,
// the team's defaults, presets, the models table and the secondary LLM's
// settings.

import {
  BackendError,
  type ExpanderDto,
  type ExpanderInputDto,
  type KnobsDto,
  type ModelDto,
  type PresetDto,
  type ProjectSettingsDto,
  type QuestionTypeDto,
} from '../backend';
import { latestOnly } from '../latest';
import type { Loupe } from './loupe.svelte';

type Builtins = Partial<Record<QuestionTypeDto, string>>;

export class KnobsStore {
  private readonly app: Loupe;
  /** The built-in models (the knobs may add rows of their own). */
  models = $state<ModelDto[]>([]);
  /** The secondary LLM's settings (`null`: off). */
  expander = $state<ExpanderDto | null>(null);
  /** The built-in instruction preamble of each question type. */
  builtinInstructions = $state<Builtins>({});
  /** The knobs on screen (an agent's call shown brings its own). */
  values = $state<KnobsDto | null>(null);
  /** The team's defaults (`.loupe.toml` over the built-in ones). */
  team = $state<KnobsDto | null>(null);
  /** Whether the project has a `.loupe.toml`. */
  teamFile = $state(false);
  /** What in `.loupe.toml` or the saved knobs was ignored. */
  warnings = $state<string[]>([]);
  presets = $state<PresetDto[]>([]);
  /** The knobs last written (or loaded), as JSON: unchanged knobs are not saved again. */
  private saved = '';

  // Knobs persist per project. Not debounced, so closing the window right
  // after a change loses nothing; "latest wins" keeps a slider drag to at
  // most one write in flight, and the last value is always written.
  private readonly requestSave = latestOnly(
    (args: { root: string; knobs: KnobsDto }) =>
      this.app.backend ? this.app.backend.saveKnobs(args.root, args.knobs) : Promise.resolve(),
    () => {},
    (e) => this.app.fail(e),
  );

  constructor(app: Loupe) {
    this.app = app;
    $effect(() => {
      const status = app.project.status;
      if (!status || !this.values) return;
      const snapshot = $state.snapshot(this.values);
      // An agent's call is tuned here without touching the user's own knobs.
      if (app.agents.view) return;
      const json = JSON.stringify(snapshot);
      if (json === this.saved) return;
      this.saved = json;
      this.requestSave({ root: status.root, knobs: snapshot });
    });
  }

  /** What the panel needs at the start: the models, the default knobs and the presets. */
  fetchStart(): Promise<[ModelDto[], KnobsDto, PresetDto[]]> {
    const b = this.app.backend;
    if (!b) return Promise.reject(new BackendError('engine', 'no backend'));
    return Promise.all([b.models(), b.defaultKnobs(), b.presets()]);
  }

  fetchBuiltins(): Promise<Builtins> {
    const b = this.app.backend;
    return b ? b.builtinInstructions() : Promise.resolve({});
  }

  started([models, knobs, presets]: [ModelDto[], KnobsDto, PresetDto[]], builtins: Builtins) {
    this.models = models;
    this.values = knobs;
    this.presets = presets;
    this.builtinInstructions = builtins;
  }

  async loadExpander() {
    const b = this.app.backend;
    if (b) this.expander = await b.expanderSettings();
  }

  /** A project's knobs as stored (they need no saving). */
  load(settings: ProjectSettingsDto) {
    this.saved = JSON.stringify(settings.knobs);
    this.values = settings.knobs;
    this.team = settings.team_knobs;
    this.teamFile = settings.team_file;
    this.warnings = settings.warnings;
  }

  /** A new question goes back to the project's type and intent. */
  resetOverrides() {
    if (!this.values || !this.team) return;
    this.values.question_type = this.team.question_type;
    this.values.intent = this.team.intent;
  }

  applyPreset = (p: PresetDto) => {
    this.values = $state.snapshot(p.knobs);
  };

  /** Back to the team's defaults (or the built-in ones). */
  resetToTeam = () => {
    if (this.team) this.values = $state.snapshot(this.team);
  };

  savePreset = async (name: string) => {
    const b = this.app.backend;
    if (!b || !this.values) return;
    try {
      this.presets = await b.savePreset(name, $state.snapshot(this.values));
    } catch (e) {
      this.app.fail(e);
    }
  };

  deletePreset = async (name: string) => {
    const b = this.app.backend;
    if (!b) return;
    try {
      this.presets = await b.deletePreset(name);
    } catch (e) {
      this.app.fail(e);
    }
  };

  /** A path weight set from the map (`null`: the path's own rule removed). */
  setWeight = (glob: string, weight: number | null) => {
    if (!this.values) return;
    const others = this.values.path_weights.filter((w) => w.glob.trim() !== glob);
    this.values.path_weights = weight === null ? others : [...others, { glob, weight }];
  };

  /** Store the secondary LLM's settings and ask again with them; the error in words, or `null`. */
  saveExpander = async (settings: ExpanderInputDto | null): Promise<string | null> => {
    const b = this.app.backend;
    if (!b) return null;
    try {
      this.expander = await b.saveExpanderSettings(settings);
      this.app.bump();
      return null;
    } catch (e) {
      return BackendError.from(e).message;
    }
  };
}
