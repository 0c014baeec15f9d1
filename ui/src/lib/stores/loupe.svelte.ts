// The app's state, by domain. `Loupe` is made once, by App.svelte, and its
// stores are handed to the components that show them. Each store owns its
// backend calls (through the one door, ../backend) and reaches its
// neighbours through `app` when a domain's action touches another (opening
// a project resets every domain; an answer is asked with the knobs, the
// question, the Changes switch and an agent's call).

import { BackendError, loadBackend, type Backend } from '../backend';
import { AgentsStore } from './agents.svelte';
import { AssemblyStore } from './assembly.svelte';
import { ChangesStore } from './changes.svelte';
import { GoldenStore } from './golden.svelte';
import { KnobsStore } from './knobs.svelte';
import { MapStore } from './map.svelte';
import { ProjectStore } from './project.svelte';
import { QuestionStore } from './question.svelte';

export class Loupe {
  backend = $state<Backend | null>(null);
  /** The failure shown in the banner (until dismissed, or a good answer). */
  error = $state<BackendError | null>(null);
  /** Bumped when a pin, a ban or the index changes: re-assemble with the same knobs. */
  version = $state(0);

  readonly project: ProjectStore;
  readonly question: QuestionStore;
  readonly changes: ChangesStore;
  readonly agents: AgentsStore;
  readonly knobs: KnobsStore;
  readonly assembly: AssemblyStore;
  readonly map: MapStore;
  readonly golden: GoldenStore;

  /** Made while App.svelte is set up: the stores' effects are its own.
   * Their order is the order those effects run on one change: the knobs
   * are saved, then the answer, the map and the golden run are asked. */
  constructor() {
    this.project = new ProjectStore(this);
    this.question = new QuestionStore(this);
    this.changes = new ChangesStore(this);
    this.agents = new AgentsStore(this);
    this.knobs = new KnobsStore(this);
    this.assembly = new AssemblyStore(this);
    this.map = new MapStore(this);
    this.golden = new GoldenStore(this);
  }

  /** Show `e` in the banner. */
  fail = (e: unknown) => {
    this.error = BackendError.from(e);
  };

  dismissError = () => {
    this.error = null;
  };

  /** Ask again with the same knobs (a pin, a ban, the index changed). */
  bump() {
    this.version += 1;
  }

  /** The page is up: load the backend, what the panels need, listen for
   * dropped folders and come back to the project a reloaded page showed.
   * Returns what stops it all when the page goes. */
  start(): () => void {
    let unlisten: (() => void) | undefined;
    void (async () => {
      try {
        this.backend = await loadBackend();
        const [knobs, recent, builtins] = await Promise.all([
          this.knobs.fetchStart(),
          this.project.fetchRecent(),
          this.knobs.fetchBuiltins(),
        ]);
        this.knobs.started(knobs, builtins);
        this.project.recent = recent;
        await this.knobs.loadExpander();
        unlisten = await this.project.listenForDrops();
        await this.project.restoreShown();
      } catch (e) {
        this.fail(e);
      }
    })();
    return () => {
      unlisten?.();
      this.agents.stop();
    };
  }
}
