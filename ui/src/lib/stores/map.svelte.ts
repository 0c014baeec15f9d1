// The centre's view (the ranked table or the token map) and the token
// map: the folder it shows, its data and its error. It follows the same
// question, knobs, pins and index as the table.

import { BackendError, type KnobsDto, type MapNodeDto } from '../backend';
import { latestOnly } from '../latest';
import { stopIfMoot } from './assembly.svelte';
import type { Loupe } from './loupe.svelte';

/** Folder levels and blocks per folder the token map draws at once. */
const MAP_VIEW = { depth: 2, per_folder: 40 };

export class MapStore {
  private readonly app: Loupe;
  /** The centre shows the ranked table or the token map. */
  view = $state<'table' | 'map'>('table');
  /** The folder the token map shows (`''`: the project). */
  under = $state('');
  map = $state<MapNodeDto | null>(null);
  error = $state<string | null>(null);

  private readonly request = latestOnly(
    (args: { root: string; question: string; knobs: KnobsDto; agent: string | null; change: string | null; under: string }) => {
      const { backend } = this.app;
      if (!backend) return Promise.reject(new BackendError('engine', 'no backend'));
      return backend.tokenMap(args.root, args.question, args.knobs, args.agent, args.change, { under: args.under, ...MAP_VIEW });
    },
    (result) => {
      this.map = result;
      this.error = null;
    },
    (e) => {
      const err = BackendError.from(e);
      // Stopped for another question: the map asks again when it is shown.
      if (err.code !== 'cancelled') this.error = err.message;
    },
    (running, next) => stopIfMoot(this.app, running, next),
  );

  constructor(app: Loupe) {
    this.app = app;
    // The map follows the same question, knobs, pins and index as the table.
    $effect(() => {
      const { project, knobs } = app;
      if (this.view !== 'map' || !project.status || !knobs.values) return;
      const agent = app.agents.view?.detail.request ?? null;
      const change = agent ? null : app.changes.arg;
      void app.version;
      const asked = { root: project.status.root, question: app.question.text, agent: agent?.id ?? null, change };
      const values = $state.snapshot(knobs.values);
      // After the panel's reading of a new question (its pairs then cached):
      // asked beside it, the map's reading would hold the panel's quick answer.
      // An ask of an earlier question still running is stopped meanwhile.
      if (app.assembly.unread(asked, values)) {
        this.request.drop();
        return;
      }
      this.request({ ...asked, knobs: values, under: this.under });
    });
  }

  show = (view: 'table' | 'map') => {
    this.view = view;
  };

  /** Show the folder at `path` (`''`: the project). */
  zoom = (path: string) => {
    this.under = path;
  };

  /** Another project: its map is asked afresh. */
  clear() {
    this.request.drop();
    this.under = '';
    this.map = null;
    this.error = null;
  }
}
