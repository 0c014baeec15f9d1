// The project and its index: opening (typed, browsed, dropped, recent),
// indexing progress and its cancel, the status bar's facts, skipped
// files, the watcher's events, and the project a reloaded page showed.

import { BackendError, type DiagnosticDto, type IndexEvent, type RecentDto, type StatusDto, type WatchEventDto } from '../backend';
import type { Loupe } from './loupe.svelte';

/** How long "index updated" stays up after the watcher re-indexed. */
const WATCH_NOTICE_MS = 8000;
/** A first open that reads at least this many files is shown as soon as
 * they are listed, answering from scans until its index lands (about
 * 4 s of indexing on two cores; smaller folders are ready in less). */
const SCAN_MIN_FILES = 2000;

export type Running = { path: string; event: IndexEvent | null };
export type WatchState = { state: 'off' | 'watching' | 'updating' | 'updated' | 'failed'; note: string };

export class ProjectStore {
  private readonly app: Loupe;
  status = $state<StatusDto | null>(null);
  /** A first index with its progress bar: the path and its last report. */
  indexing = $state<Running | null>(null);
  /** A first open shown at its lexical stage: the rest of the index (the
   * vectors) is arriving; its path and last progress report. */
  arriving = $state<Running | null>(null);
  /** An instant reopen is checking the folder for changes made while closed. */
  refreshing = $state(false);
  /** The skipped files, while their list is open. */
  diagnostics = $state<DiagnosticDto[] | null>(null);
  recent = $state<RecentDto[]>([]);
  watch = $state<WatchState>({ state: 'off', note: '' });
  private watchTimer: ReturnType<typeof setTimeout> | undefined;
  private graphTimer: ReturnType<typeof setTimeout> | undefined;
  /** No folder can be opened now (no backend yet, or one is being indexed). */
  busy = $derived.by(() => !this.app.backend || this.indexing !== null || this.arriving !== null);
  /** The arriving index is the shown project's. */
  arrivingHere = $derived(this.arriving !== null && this.status?.root === this.arriving.path);
  /** The project folder's name (the token map's first breadcrumb). */
  name = $derived(this.status ? (this.status.root.split('/').filter(Boolean).at(-1) ?? this.status.root) : '');

  constructor(app: Loupe) {
    this.app = app;
  }

  fetchRecent(): Promise<RecentDto[]> {
    const b = this.app.backend;
    return b ? b.recentProjects() : Promise.resolve([]);
  }

  /** Open folders dropped on the window. */
  listenForDrops(): Promise<() => void> {
    const b = this.app.backend;
    return b ? b.onFolderDrop((path) => void this.open(path)) : Promise.resolve(() => {});
  }

  /** A page reloaded after its process died: the engine lived on, with
   * the project this page showed and the question it asked. */
  async restoreShown() {
    const b = this.app.backend;
    if (!b) return;
    const shown = await b.shownProject();
    if (shown && !this.status) {
      this.app.question.draft = shown.question;
      // Said from the first frame, not once the answer is drawn.
      if (shown.indexing) this.arriving = { path: shown.status.root, event: null };
      await this.show(shown.status);
      if (shown.indexing) void this.followArriving(shown.status.root);
    }
  }

  open = async (path: string) => {
    const { app } = this;
    const backend = app.backend;
    if (!backend || this.indexing) return;
    app.error = null;
    this.diagnostics = null;
    // An indexed project shows at once; its index is brought up to date in
    // the background (and kept so by the watcher).
    try {
      const known = await backend.openIndexed(path);
      if (known) {
        await this.show(known);
        void this.refreshIndex(path);
        return;
      }
    } catch (e) {
      app.fail(e);
      return;
    }
    this.indexing = { path, event: null };
    // Shown as soon as the lexical stage is committed; the rest arrives. A
    // large folder is shown as soon as its files are listed, its questions
    // answered from a scan of the files until the index lands.
    let early: Promise<boolean> | null = null;
    let scanned = false;
    try {
      const opened = await backend.openProject(path, (event) => {
        if (this.arriving?.path === path) this.arriving.event = event;
        else if (this.indexing) this.indexing.event = event;
        if (event.stage === 'parse' && !early && (event.total ?? 0) >= SCAN_MIN_FILES) {
          scanned = true;
          early = this.showEarly(path, event, true);
        }
        if (event.stage === 'ready') {
          if (!early) early = this.showEarly(path, event, false);
          else if (scanned) {
            scanned = false;
            const shown = early;
            void shown.then((ok) => {
              if (ok) void this.landIndex(path);
            });
          }
        }
      });
      if (early && (await early)) this.landSignals(opened.status);
      else await this.show(opened.status);
    } catch (e) {
      const err = BackendError.from(e);
      // Cancelled after the lexical stage: what is there stays usable.
      if (early && (await early) && err.code === 'cancelled') void this.refreshStatus(path);
      else app.error = err;
    } finally {
      this.indexing = null;
      if (this.arriving?.path === path) this.arriving = null;
    }
  };

  /** Ask the user for a folder (`null`: they cancelled). */
  pick = (): Promise<string | null> => this.app.backend?.pickFolder() ?? Promise.resolve(null);

  /** Show a project being opened for the first time once questions can be
   * asked (with `scan`, before its index: from a scan of the files); false
   * when there is nothing to show yet (an empty folder). */
  private async showEarly(path: string, event: IndexEvent, scan: boolean): Promise<boolean> {
    const backend = this.app.backend;
    if (!backend) return false;
    try {
      const known = scan ? await backend.openScanning(path) : await backend.openIndexed(path);
      if (!known) return false;
      // Reports sent while the status was asked for went to the bar.
      this.arriving = { path, event: this.indexing?.path === path ? (this.indexing.event ?? event) : event };
      this.indexing = null;
      await this.show(known);
      return true;
    } catch (e) {
      this.app.fail(e);
      return false;
    }
  }

  /** The rest of the index landed: its status, and the question asked again
   * with it (the table marks what entered or left the prompt). */
  private landSignals(s: StatusDto) {
    if (this.status?.root !== s.root) return;
    const before = this.status;
    this.take(s);
    // Nothing new landed (no embedder, or the vectors were there already).
    if (s.vector_chunks === before.vector_chunks && s.generation === before.generation && s.history_commits === before.history_commits) return;
    this.app.assembly.expectLanding(before.generation === 0 ? 'the index' : 'vectors');
    this.app.bump();
  }

  /** A page reloaded while the shown project's index was still arriving:
   * follow it with a run of our own (it waits for the one in progress,
   * shares its cancel, and reports its own steps), then ask again with
   * what landed. */
  private async followArriving(root: string) {
    const backend = this.app.backend;
    if (!backend) return;
    this.arriving = { path: root, event: null };
    try {
      const opened = await backend.openProject(root, (event) => {
        if (this.arriving?.path === root) this.arriving.event = event;
      });
      this.landSignals(opened.status);
    } catch (e) {
      const err = BackendError.from(e);
      if (err.code === 'cancelled') void this.refreshStatus(root);
      else this.app.error = err;
    } finally {
      if (this.arriving?.path === root) this.arriving = null;
    }
  }

  /** The first index of a project shown from a scan landed: its status,
   * and the question asked again from the index. */
  private async landIndex(path: string) {
    try {
      const s = await this.app.backend?.openIndexed(path);
      if (s) this.landSignals(s);
    } catch (e) {
      this.app.fail(e);
    }
  }

  /** Show `s`; while a vector graph is being built for it, look again
   * every second so the bar follows it until the graph answers. */
  private take(s: StatusDto) {
    this.status = s;
    clearTimeout(this.graphTimer);
    if (s.vector_graph !== null && s.vector_graph < 100) {
      this.graphTimer = setTimeout(() => void this.refreshStatus(s.root), 1000);
    }
  }

  private async refreshStatus(root: string) {
    try {
      const s = await this.app.backend?.projectStatus(root);
      if (s && this.status?.root === s.root) this.take(s);
    } catch (e) {
      this.app.fail(e);
    }
  }

  /** Make `opened` the current project: its knobs, pins, bans and watcher. */
  private async show(opened: StatusDto) {
    const { app } = this;
    const backend = app.backend;
    if (!backend) return;
    const previous = this.status?.root;
    if (previous && previous !== opened.root) await backend.unwatchProject(previous).catch(() => false);
    const settings = await backend.projectSettings(opened.root);
    app.knobs.load(settings);
    app.assembly.selection = settings.selection;
    // The box's text is what the new project is asked, not what the
    // debounce last let through: cleared just before the switch, the old
    // question would otherwise be asked of the new project and drawn there
    // with an empty box (e2e test 8's failure, about 1 run in 30).
    app.question.takeDraft();
    this.take(opened);
    // What was asked of the previous project is not this one's answer.
    app.assembly.clear();
    app.map.clear();
    app.golden.clear();
    app.agents.clear();
    app.changes.clear();
    this.recent = await backend.recentProjects();
    await this.startWatching(opened.root);
    app.agents.follow(opened.root);
  }

  /** The incremental pass after an instant reopen: no progress bar, just a note. */
  private async refreshIndex(path: string) {
    const backend = this.app.backend;
    if (!backend) return;
    this.refreshing = true;
    try {
      const opened = await backend.openProject(path, () => {});
      if (this.status?.root === opened.status.root) {
        this.take(opened.status);
        if (opened.files_changed > 0) this.app.bump();
      }
    } catch (e) {
      const err = BackendError.from(e);
      if (err.code !== 'cancelled') this.app.error = err;
    } finally {
      this.refreshing = false;
    }
  }

  cancelIndexing = async () => {
    const backend = this.app.backend;
    const running = this.indexing ?? this.arriving;
    if (!backend || !running) return;
    try {
      // The path being indexed, not `status.root` (that may be the previous project).
      await backend.cancelIndex(running.path);
    } catch (e) {
      this.app.fail(e);
    }
  };

  toggleDiagnostics = async () => {
    if (this.diagnostics) {
      this.diagnostics = null;
      return;
    }
    const backend = this.app.backend;
    if (!backend || !this.status) return;
    try {
      this.diagnostics = await backend.diagnostics(this.status.root);
    } catch (e) {
      this.app.fail(e);
    }
  };

  forgetRecent = async (root: string) => {
    const backend = this.app.backend;
    if (!backend) return;
    try {
      this.recent = await backend.forgetRecent(root);
    } catch (e) {
      this.app.fail(e);
    }
  };

  private async startWatching(root: string) {
    const backend = this.app.backend;
    if (!backend) return;
    try {
      await backend.watchProject(root, (e) => this.onWatchEvent(root, e));
      this.watch = { state: 'watching', note: '' };
    } catch (e) {
      this.watch = { state: 'failed', note: BackendError.from(e).message };
    }
  }

  private onWatchEvent(root: string, e: WatchEventDto) {
    if (this.status?.root !== root) return;
    clearTimeout(this.watchTimer);
    if (e.kind === 'changed') {
      this.watch = { state: 'updating', note: `${e.paths} changed` };
    } else if (e.kind === 'indexed') {
      const files = e.files_changed + e.files_deleted;
      if (files === 0) {
        // Touched but unchanged (a save without edits): nothing to show.
        this.watch = { state: 'watching', note: '' };
        return;
      }
      this.watch = { state: 'updated', note: `${files} ${files === 1 ? 'file' : 'files'}` };
      // The candidate cache is keyed by index generation: this re-retrieves.
      this.app.bump();
      void this.refreshStatus(root);
      this.watchTimer = setTimeout(() => (this.watch = { state: 'watching', note: '' }), WATCH_NOTICE_MS);
    } else if (e.kind === 'history') {
      // A commit, checkout or pull: history evidence changed, so re-retrieve.
      this.watch = { state: 'updated', note: 'commit history re-read' };
      this.app.bump();
      void this.refreshStatus(root);
      this.watchTimer = setTimeout(() => (this.watch = { state: 'watching', note: '' }), WATCH_NOTICE_MS);
    } else {
      this.watch = { state: 'failed', note: e.message };
    }
  }
}
