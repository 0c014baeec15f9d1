// The answer: `assemble` asked on every change of the question, the knobs,
// the pins and bans or the index (latest request wins); with the re-ranker
// on, a new question is answered first without its reading, then again with
// it; the rows that entered or left the prompt when the index, vectors or
// the reading landed; pins and bans; the open row's detail; saving the
// prompt.

import { BackendError, type AssemblyDto, type ChunkDetailDto, type KnobsDto, type MarkDto, type RowDto, type SelectionDto, type TargetDto } from '../backend';
import { untrack } from 'svelte';
import { latestOnly } from '../latest';
import { rowKey } from '../rows';
import type { Loupe } from './loupe.svelte';

/** What a request in flight asked: the panel's answer or the map's. */
export type Asked = { root: string; question: string; agent: string | null; change: string | null };

/** The panel's request: what is asked, under which knobs, and whether the
 * re-ranker's reading is left for a second request. */
type PanelAsk = Asked & { knobs: KnobsDto; skipReading: boolean };

const sameAsked = (a: Asked | null, b: Asked) =>
  a !== null && a.root === b.root && a.question === b.question && a.agent === b.agent && a.change === b.change;

/** Another question (or none, or another project) makes an answer in
 * flight moot, so stop it: a scan of an unindexed folder reads every
 * file, and the map's ask and the panel's share one lock in the engine,
 * so either left running holds the next question back. A knob moved on
 * the same question waits for it instead. */
export function stopIfMoot(app: Loupe, running: Asked, next: Asked | null) {
  if (!(next && sameAsked(running, next)) && app.backend) void app.backend.cancelQuestion(running.root, running.question).catch(() => {});
}

/** The rows in the prompt, by `rowKey` (ids of an answer from a scan are
 * its own, not the index's). */
function inPrompt(a: AssemblyDto): Set<string> {
  return new Set(a.rows.filter((r) => r.status === 'included' || r.status === 'degraded').map(rowKey));
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every((k) => b.has(k));
}

/** What the last landing changed in the prompt, by `rowKey`, what landed
 * (`the index` after a scan, or `vectors`), and the question and prompt it
 * marked. */
export type Landed = { entered: Set<string>; left: Set<string>; what: string; question: string; prompt: Set<string> };

export type Detail = { row: RowDto; lod: number; data: ChunkDetailDto | null; error: string | null };

export class AssemblyStore {
  private readonly app: Loupe;
  /** The answer drawn (`null`: none asked, or not back yet). */
  result = $state<AssemblyDto | null>(null);
  /** Answers drawn so far (the tests count them). */
  count = $state(0);
  /** The project's pins and bans. */
  selection = $state<SelectionDto>({ pinned: [], banned: [] });
  /** The row open in the detail pane. */
  detail = $state<Detail | null>(null);
  /** What the last landing changed in the prompt (`null`: nothing to show):
   * kept while both the question and the prompt stay the same. */
  landed = $state<Landed | null>(null);
  /** The rows in the prompt when signals landed: the next answer marks
   * the rows that entered or left it. */
  private beforeLanding: Set<string> | null = null;
  private landing = 'vectors';
  /** The question the re-ranker last read for: a knob moved on it asks
   * with the reading at once (its pairs are cached), a new one first
   * without. Reactive for the token map, which waits for it. */
  private readFor = $state<Asked | null>(null);

  /** Candidates each path-weight glob decided in the last assembly. */
  ruleCounts = $derived.by(() => {
    const counts: Record<string, number> = {};
    for (const r of this.result?.rows ?? []) {
      const rule = r.score.path_rule;
      if (rule) counts[rule] = (counts[rule] ?? 0) + 1;
    }
    return counts;
  });

  // The open detail follows its row through re-assemblies (status, marks).
  detailRow = $derived(this.detail ? (this.result?.rows.find((r) => r.id === this.detail?.row.id) ?? this.detail.row) : null);

  private readonly request = latestOnly(
    async (args: PanelAsk) => {
      const { backend } = this.app;
      if (!backend) throw new BackendError('engine', 'no backend');
      const result = await backend.assemble(args.root, args.question, args.knobs, args.agent, args.change, args.skipReading);
      return { args, result };
    },
    ({ args, result }) => this.drawn(result, args),
    (e) => this.app.fail(e),
    (running, next) => stopIfMoot(this.app, running, next),
  );

  constructor(app: Loupe) {
    this.app = app;
    // Every change of the question or a knob re-assembles; no "apply" button.
    $effect(() => {
      const { project, knobs, question } = app;
      const agent = app.agents.view?.detail.request ?? null;
      // An agent's call brings its own change; otherwise the Changes switch says.
      const change = agent ? null : app.changes.arg;
      // A review of a change may come with no question. A cleared question
      // shows no answer: neither one still on its way nor the one drawn, whose
      // prompt Copy would otherwise hand out for a question no longer asked.
      if (!project.status || !knobs.values || (!question.text.trim() && !agent?.change && !change)) {
        this.request.drop();
        this.result = null;
        return;
      }
      void app.version;
      const asked = { root: project.status.root, question: question.text, agent: agent?.id ?? null, change };
      const values = $state.snapshot(knobs.values);
      this.request({ ...asked, knobs: values, skipReading: untrack(() => this.notReadYet(asked, values)) });
    });
  }

  /** Whether the question `asked` under `knobs` still waits for the
   * re-ranker's first reading (the panel asks without it first): the token
   * map waits for it, so that its own ask reads cached pairs and never
   * holds the panel's quick answer back behind a reading. */
  unread(asked: Asked, knobs: KnobsDto): boolean {
    return asked.question.trim() !== '' && this.notReadYet(asked, knobs);
  }

  /** The re-ranker is on and has not read `asked` yet. */
  private notReadYet(asked: Asked, knobs: KnobsDto): boolean {
    return knobs.read_files > 0 && !sameAsked(this.readFor, asked);
  }

  private drawn(result: AssemblyDto, args: PanelAsk) {
    const question = this.app.question.text;
    if (this.beforeLanding) {
      const before = this.beforeLanding;
      const now = inPrompt(result);
      this.landed = {
        entered: new Set([...now].filter((id) => !before.has(id))),
        left: new Set([...before].filter((id) => !now.has(id))),
        what: this.landing,
        question,
        prompt: now,
      };
      this.beforeLanding = null;
    } else if (this.landed && (this.landed.question !== question || !sameSet(this.landed.prompt, inPrompt(result)))) {
      // The marks describe the prompt the landing made: they go with the
      // next question or with a prompt a knob changed, not with an answer
      // asked again for nothing new (a status refresh).
      this.landed = null;
    }
    this.result = result;
    this.count += 1;
    this.app.error = null;
    if (args.skipReading) {
      // Today's ranking is drawn; the re-ranked answer follows and marks
      // what it changed.
      this.expectLanding("the model's reading");
      this.request({ ...args, skipReading: false });
    } else if (args.knobs.read_files > 0) {
      this.readFor = { root: args.root, question: args.question, agent: args.agent, change: args.change };
    }
  }

  /** Signals landed (`what`): the next answer marks what entered or left the prompt. */
  expectLanding(what: string) {
    this.beforeLanding = this.result ? inPrompt(this.result) : null;
    this.landing = what;
  }

  /** Another project: what was asked of the previous one is not its answer. */
  clear() {
    this.request.drop();
    this.result = null;
    this.detail = null;
  }

  /** Pin, ban or clear a chunk, file or folder. */
  mark = async (target: TargetDto, m: MarkDto) => {
    const { backend } = this.app;
    const status = this.app.project.status;
    if (!backend || !status) return;
    try {
      this.selection = await backend.mark(status.root, target, m);
      this.app.bump();
    } catch (e) {
      this.app.fail(e);
    }
  };

  loadDetail = async (row: RowDto, lod: number) => {
    const { backend } = this.app;
    const status = this.app.project.status;
    const knobs = this.app.knobs.values;
    if (!backend || !status || !knobs) return;
    this.detail = { row, lod, data: this.detail?.row.id === row.id ? this.detail.data : null, error: null };
    try {
      const data = await backend.chunkDetail(status.root, row.id, lod, $state.snapshot(knobs));
      if (this.detail?.row.id === row.id) this.detail = { ...this.detail, lod, data, error: null };
    } catch (e) {
      if (this.detail?.row.id === row.id) this.detail = { ...this.detail, error: BackendError.from(e).message };
    }
  };

  openDetail = (row: RowDto) => {
    void this.loadDetail(row, row.lod ?? 0);
  };

  closeDetail = () => {
    this.detail = null;
  };

  /** The open row at another level of detail. */
  setLod = (lod: number) => {
    if (this.detailRow) void this.loadDetail(this.detailRow, lod);
  };

  /** Save the prompt where the user picks; the path, or `null` if they cancel. */
  savePrompt = async (text: string): Promise<string | null> => {
    const { backend } = this.app;
    const knobs = this.app.knobs.values;
    if (!backend || !knobs) return null;
    const ext = knobs.toggles.structured || knobs.format === 'json' ? 'json' : knobs.format === 'markdown' ? 'md' : 'xml';
    return backend.savePrompt(text, `prompt.${ext}`);
  };

  copy = (text: string): Promise<void> => this.app.backend?.copy(text) ?? Promise.resolve();
}
