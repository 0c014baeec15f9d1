// An in-memory backend for `vite build --mode mock`: scenarios picked by the
// opened path, and a call log on `window.__loupeMock` that the Playwright
// tests read. Never part of the production bundle.
//
// Assemblies are not made here: `canned.json` holds the real app's answers
// (written by `make types` from `src-tauri/tests/it/canned.rs`) to every
// request the tests make, on the fixture `tests/fixtures/panel`. A request
// without a canned answer fails with `bad_request` and is reported to the
// test harness (`make ui-record` records the new ones).
//
//   …missing…  → open fails with `bad_project`
//   …/many     → 2,000 rows (the canned rows repeated: the table's scale)
//   …/big      → 400 rows of ~250-token Rust documents (the highlighting bench)
//   …/long     → a row with a very long path first
//   …/deep     → a row deep in a vendored crate first
//                (vendor/serde_json/src/value/de/some/deeper/folder/mod.rs:112-170)
//   …/slow     → indexing takes ~5 s of progress and can be cancelled
//   …/team     → a project with a `.loupe.toml` (budget 3000, one bad key)
//   …/stale    → the fixture with src/pack.rs changed since it was indexed
//   …/secret   → the fixture with a key to redact
//   …/staged   → the vectors arrive ~5 s after the lexical stage
//   otherwise  → the fixture as it is
// A question containing "fail" makes `assemble` fail with `bad_request`;
// `window.__loupeMock.holdAssemble()` keeps answers (the panel's and the
// token map's) back until `releaseAssemble()`.
// Tests make an agent's `loupe mcp` call with
// `window.__loupeMock.agentCall(question, knobs)`; it is answered as the
// call would be and listed by `agentRequests`.
// Pins, bans, saved knobs, presets and recent projects live in
// localStorage, so a reload behaves like a restart; tests fire watcher
// events with `window.__loupeMock.emitWatch(event)`.

import {
  BackendError,
  type AgentRequestDto,
  type AssemblyDto,
  type Backend,
  type CompletionDto,
  type IndexEvent,
  type KnobsDto,
  type MapNodeDto,
  type MapStatusDto,
  type StatusDto,
  type SharedDto,
  type MapViewDto,
  type ExpanderDto,
  type ModelDto,
  type OpenedDto,
  type PresetDto,
  type QuestionTypeDto,
  type RecentDto,
  type RowDto,
  type SelectionDto,
  type TargetDto,
  type WatchEventDto,
} from './types';
import cannedFile from './canned.json';

interface Call {
  cmd: string;
  args: unknown;
}
declare global {
  interface Window {
    /** Set by the test harness: told of every request looked up in the canned answers. */
    __loupeAsked?: (request: CannedRequest, key: string, found: boolean) => void;
    __loupeMock: {
      calls: Call[];
      copied: string[];
      saved: { path: string; text: string }[];
      emitWatch: (e: WatchEventDto) => void;
      agentCall: (question: string, knobs?: Partial<KnobsDto>) => void;
      agentKnobs: () => KnobsDto | null;
      holdAssemble: () => void;
      releaseAssemble: () => void;
      /** The page's process dies while the engine lives on: the next
       * load (the test reloads) is told what was shown and asked. */
      killPage: () => void;
    };
  }
}
let watchHandler: ((e: WatchEventDto) => void) | null = null;
/** Agents' calls on the open project, oldest first, with what they got. */
const agentCalls: { dto: AgentRequestDto; knobs: KnobsDto; prompt: string }[] = [];
let agentKnobsSaved: KnobsDto | null = null;
/** While set, answers to `assemble` wait for it (a slow engine, on cue). */
let assembleGate: { promise: Promise<void>; open: () => void } | null = null;
/** The answers held back by the gate, each ended by `cancel_question`. */
let held: { question: string; cancel: () => void }[] = [];
window.__loupeMock = {
  calls: [],
  copied: [],
  saved: [],
  emitWatch: (e) => watchHandler?.(e),
  agentCall(question, over = {}) {
    const root = openRoot;
    const knobs = { ...structuredClone(agentKnobsSaved ?? teamKnobs(root).knobs), budget: 4000, ...over };
    const got = cannedAssembly(root, question, knobs, { pinned: [], banned: [] }, null);
    const n = agentCalls.length;
    agentCalls.push({
      knobs,
      prompt: got.prompt,
      dto: {
        id: `call-${n + 1}`,
        time_ms: Date.now(),
        tool: 'context',
        client: 'mock-agent 1.0',
        question,
        change: null,
        target: null,
        model: knobs.model,
        unit: knobs.budget_unit,
        budget: got.report.budget,
        used: got.report.used,
        truncated: got.report.was_truncated,
        included: got.rows.filter((r) => r.status === 'included').length,
        dropped: got.report.dropped_count,
        pins: 0,
        bans: 0,
      },
    });
  },
  agentKnobs: () => agentKnobsSaved,
  holdAssemble() {
    if (assembleGate) return;
    let open = () => {};
    const promise = new Promise<void>((r) => (open = r));
    assembleGate = { promise, open };
  },
  releaseAssemble() {
    assembleGate?.open();
    assembleGate = null;
    held = [];
  },
  killPage() {
    // What the real engine remembers past the page: the watched project
    // and its last question. Read once, by the next load.
    if (watchHandler) store('engine-shown', { root: openRoot, question: lastQuestion, indexing: indexingRoot === openRoot });
  },
};

/** Wait while the gate is closed; `cancel_question` ends the wait with
 * the `cancelled` code. */
async function heldBack(question: string) {
  const gate = assembleGate;
  if (!gate) return;
  await new Promise<void>((resolve, reject) => {
    held.push({ question, cancel: () => reject(new BackendError('cancelled', 'cancelled')) });
    void gate.promise.then(resolve);
  });
}

/** One `open_project` run: a made-up index with progress, slow where the
 * path says so (`/scan`, `/slow`, `/staged`'s vectors). */
async function indexRun(path: string, onProgress: (e: IndexEvent) => void): Promise<OpenedDto> {
  cancelRequested = false;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (path.endsWith('/scan')) {
    // A large first index: the UI shows the project while it runs.
    scanning.add(path);
    onProgress({ stage: 'walk', done: SCAN_FILES, total: SCAN_FILES, elapsed_ms: elapsed() });
    for (let done = 0; done <= SLOW_STEPS; done++) {
      if (cancelRequested) throw new BackendError('cancelled', 'cancelled');
      onProgress({ stage: 'parse', done: (done * SCAN_FILES) / SLOW_STEPS, total: SCAN_FILES, elapsed_ms: elapsed() });
      await sleep(SLOW_STEP_MS);
    }
    scanning.delete(path);
  }
  if (path.endsWith('/slow')) {
    for (let done = 0; done <= SLOW_STEPS; done++) {
      if (cancelRequested) throw new BackendError('cancelled', 'cancelled');
      onProgress({ stage: 'parse', done, total: SLOW_STEPS, elapsed_ms: elapsed() });
      await sleep(SLOW_STEP_MS);
    }
  }
  for (const [stage, total] of [['walk', 12], ['parse', 12], ['commit', 1]] as [string, number][]) {
    onProgress({ stage, done: total, total, elapsed_ms: elapsed() });
    await sleep(60);
  }
  // Committed: questions can be asked (and the folder counts as indexed).
  openRoot = path;
  const recent = stored<RecentDto[]>('recent', []).filter((r) => r.root !== path);
  recent.unshift({ root: path, opened_at: Math.floor(Date.now() / 1000) });
  store('recent', recent.slice(0, 12));
  onProgress({ stage: 'ready', done: 1, total: 1, elapsed_ms: elapsed() });
  if (path.endsWith('/staged') && !vectorsLanded.has(path)) {
    for (let done = 0; done <= SLOW_STEPS; done++) {
      if (cancelRequested) throw new BackendError('cancelled', 'cancelled');
      onProgress({ stage: 'embed', done, total: SLOW_STEPS, elapsed_ms: elapsed() });
      await sleep(SLOW_STEP_MS);
    }
    vectorsLanded.add(path);
  }
  onProgress({ stage: 'done', done: 1, total: 1, elapsed_ms: elapsed() });
  await sleep(60);
  const n = filesOf(path).length;
  return {
    status: statusOf(path),
    files_changed: n,
    files_unchanged: 0,
    embedding_incomplete: false,
  };
}

/** Persisted mock state (a reload is a restart). */
function stored<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(`loupe-mock:${key}`);
    return raw ? (JSON.parse(raw) as T) : fallback;
  } catch {
    return fallback;
  }
}
function store(key: string, value: unknown) {
  localStorage.setItem(`loupe-mock:${key}`, JSON.stringify(value));
}
const log = (cmd: string, args: unknown) =>
  window.__loupeMock.calls.push({ cmd, args: JSON.parse(JSON.stringify(args ?? null)) });

/** A request as the canned answers are keyed: what the real app assembles from. */
interface CannedRequest {
  project: string;
  question: string;
  knobs: KnobsDto;
  selection: SelectionDto;
  change: string | null;
  /** Asked without the re-ranker's reading (absent: with it). */
  skip_reading?: true;
}
interface CannedChunk {
  id: number;
  start_line: number;
  end_line: number;
  symbol: string | null;
  language: string;
}
interface CannedFile {
  path: string;
  tokens: number;
  chunks: CannedChunk[];
}
interface Canned {
  models: ModelDto[];
  builtin_instructions: Partial<Record<QuestionTypeDto, string>>;
  default_knobs: KnobsDto;
  projects: Record<string, CannedFile[]>;
  answers: { request: CannedRequest; answer?: AssemblyDto; error?: { code: string; message: string } }[];
}
const canned = cannedFile as unknown as Canned;

/** JSON with every object's keys sorted: the same request, the same key. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
const answers = new Map(canned.answers.map((a) => [stable(a.request), a]));

const DEFAULT_KNOBS: KnobsDto = canned.default_knobs;
const BUILTIN_INSTRUCTIONS = canned.builtin_instructions;

/** Projects of the staged scenario whose vectors have landed. */
const vectorsLanded = new Set<string>();
/** Projects of the scan scenario whose first index has not landed: their
 * questions are answered from a scan of the files. */
const scanning = new Set<string>();
/** Files the scan scenario's first index reads: enough for the UI to show
 * the project before its index lands (`SCAN_MIN_FILES` in stores/project.svelte.ts). */
const SCAN_FILES = 5000;

/** Which fixture variant a scenario's root is served from. */
function projectOf(root: string): string {
  if (root.endsWith('/stale')) return 'stale';
  if (root.endsWith('/secret')) return 'secret';
  if (root.endsWith('/staged')) return vectorsLanded.has(root) ? 'staged-vectors' : 'staged';
  return 'panel';
}

/** Status reads of each `/graph` project: its vector graph is built in
 * the background, a third more each time the status is asked. */
const graphReads = new Map<string, number>();

/** A `/graph` project's vector graph: `null` (the scan) elsewhere. */
function vectorGraph(root: string): number | null {
  if (!root.endsWith('/graph')) return null;
  const reads = (graphReads.get(root) ?? 0) + 1;
  graphReads.set(root, reads);
  return Math.min(100, reads * 34);
}

/** A project's status as the mock keeps it. */
function statusOf(root: string): StatusDto {
  const files = filesOf(root);
  const ready = !root.endsWith('/staged') || vectorsLanded.has(root);
  const chunks = files.reduce((n, f) => n + f.chunks.length, 0);
  if (scanning.has(root)) {
    // The engine's status before a first index lands: nothing committed.
    return { root, files: 0, chunks: 0, generation: 0, vectors_ready: false, vector_model: 'loupe-code', vector_chunks: 0, vector_graph: null, diagnostics: 0, recovered: [], history_commits: 0, history_note: null, shared: null };
  }
  return {
    root,
    files: files.length,
    chunks,
    generation: 1,
    vectors_ready: ready,
    vector_model: 'loupe-code',
    vector_chunks: ready ? chunks : 0,
    vector_graph: vectorGraph(root),
    diagnostics: 1,
    recovered: [],
    history_commits: 128,
    history_note: null,
    shared: sharedOf(root, files.length, chunks),
  };
}

/** `/team` projects index from a team store (`/team-down`: one nobody answers at). */
function sharedOf(root: string, files: number, chunks: number): SharedDto | null {
  const store = 'postgres://loupe@db.team.internal:5432/loupe';
  if (root.endsWith('/team')) {
    return { store, files_pulled: files, vectors_pulled: chunks, files_pushed: 0, vectors_pushed: 0, rejected: 0, fault: null };
  }
  if (root.endsWith('/team-down')) {
    return { store, files_pulled: 0, vectors_pulled: 0, files_pushed: 0, vectors_pushed: 0, rejected: 0, fault: 'pulling from the shared store: no answer within 5.0 s' };
  }
  return null;
}

/** The indexed files: the fixture's, or many made-up ones for the scale scenarios. */
function filesOf(root: string): CannedFile[] {
  const made = (n: number, path: (i: number) => string, tokens: (i: number) => number, symbol: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => ({
      path: path(i),
      tokens: tokens(i),
      chunks: [{ id: i + 1, start_line: 1, end_line: 9, symbol: symbol(i), language: 'rust' }],
    }));
  if (root.endsWith('/big')) {
    return made(400, (i) => `src/part_${Math.floor(i / 20)}/unit_${i}.rs`, () => 250, (i) => `handle_${i}`);
  }
  if (root.endsWith('/many')) {
    return made(2000, (i) => `src/module_${Math.floor(i / 10)}/file_${i}.rs`, (i) => 40 + (i % 7) * 10, (i) => `function_${i}`);
  }
  return canned.projects[projectOf(root)] ?? [];
}

/** The canned answer to a request, as the real app gave it (or its error). */
function cannedAssembly(root: string, question: string, knobs: KnobsDto, selection: SelectionDto, change: string | null, skipReading = false): AssemblyDto {
  // The highlighting bench's prompt is made up whatever it asks: the
  // default question's rows are only its template.
  const request: CannedRequest = root.endsWith('/big')
    ? { project: 'panel', question: 'how does packing work?', knobs: DEFAULT_KNOBS, selection: { pinned: [], banned: [] }, change: null }
    : { project: projectOf(root), question, knobs, selection, change, ...(skipReading ? { skip_reading: true } : {}) };
  const key = stable(request);
  const found = answers.get(key);
  window.__loupeAsked?.(JSON.parse(key) as CannedRequest, key, found !== undefined);
  if (!found) {
    throw new BackendError('bad_request', 'the mock has no canned answer for this request: run `make ui-record`');
  }
  if (found.error) throw new BackendError(found.error.code as never, found.error.message);
  const answer = structuredClone(found.answer) as AssemblyDto;
  if (scanning.has(root)) return scanned(answer);
  if (root.endsWith('/many')) return scaled(answer, filesOf(root), null);
  if (root.endsWith('/big')) return scaled(answer, filesOf(root), knobs.budget ?? 20000);
  if (root.endsWith('/long')) {
    const deep = Array.from({ length: 24 }, (_, i) => `very_long_directory_name_${i}`).join('/');
    putFirst(answer, `${deep}/worker.rs`, 1, 9);
  }
  if (root.endsWith('/deep')) putFirst(answer, 'vendor/serde_json/src/value/de/some/deeper/folder/mod.rs', 112, 170);
  return answer;
}

/** A row like the answer's first, at `path`, put first. */
function putFirst(answer: AssemblyDto, path: string, start_line: number, end_line: number) {
  const first = answer.rows[0];
  if (!first) return;
  answer.rows.unshift({ ...structuredClone(first), id: 1_000_000, path, start_line, end_line });
  answer.rows.forEach((r, i) => (r.rank = i + 1));
}

/** What a scan answers before the index lands (the engine's
 * `Unindexed::Scan`): ids numbered per answer, one file the index will
 * bring in left out, and the report saying where it came from. */
function scanned(answer: AssemblyDto): AssemblyDto {
  for (const r of answer.rows) {
    r.id += 500_000;
    if (r.path === 'src/render.rs' && r.status === 'included') r.status = 'dropped';
  }
  answer.report.warnings.push(
    `partial index: signals: a scan of ${SCAN_FILES} files for the question's words (the first index is not built yet: no symbols, graph, history or vectors)`,
  );
  return answer;
}

/** A canned answer stretched over many files: its rows repeated, one per
 * file, each keeping its status (the table's and the highlighter's scale,
 * not a ranking). With a `budget` (the big scenario), the rows are all
 * included while they fit it, and the prompt holds their documents. */
function scaled(answer: AssemblyDto, files: CannedFile[], budget: number | null): AssemblyDto {
  const big = budget !== null;
  let used = 0;
  const base = answer.rows.filter((r) => r.status !== 'banned');
  if (base.length === 0) return answer;
  answer.rows = files.map((f, i): RowDto => {
    const r = structuredClone(base[i % base.length] as RowDto);
    const c = f.chunks[0] as CannedChunk;
    return {
      ...r,
      id: c.id,
      rank: i + 1,
      path: f.path,
      symbol: c.symbol,
      language: 'rust',
      start_line: c.start_line,
      end_line: c.end_line,
      ...(big ? fitted(f.tokens) : { status: r.status, tokens: r.status === 'included' ? f.tokens : 0 }),
    };
  });
  function fitted(tokens: number): Pick<RowDto, 'status' | 'tokens'> {
    if (used + tokens > (budget ?? 0)) return { status: 'dropped', tokens: 0 };
    used += tokens;
    return { status: 'included', tokens };
  }
  if (big) {
    const docs = answer.rows.filter((r) => r.status === 'included').map((r) => `<document source="@${r.path}:${r.start_line}-${r.end_line}">\n${bigDocument(r.symbol ?? 'item')}</document>`);
    answer.prompt = ['<documents>', ...docs, '</documents>', '<question>how does packing work?</question>'].join('\n');
  }
  return answer;
}

/** ~250 tokens of Rust: the highlighting benchmark's documents. */
function bigDocument(f: string): string {
  return [
    `/// Handles one request for ${f}: parses it, checks the limits, answers.`,
    `pub fn ${f}(req: &Request, limits: &Limits) -> Result<Response, Error> {`,
    `    let body = std::str::from_utf8(&req.body).map_err(|e| Error::Utf8(e.to_string()))?;`,
    `    if body.len() > limits.max_body { return Err(Error::TooLarge { len: body.len() }); }`,
    `    let mut out = Vec::with_capacity(16);`,
    `    for (i, line) in body.lines().enumerate() {`,
    `        /* skip blank lines and comments */`,
    `        if line.trim().is_empty() || line.starts_with('#') { continue; }`,
    `        out.push(format!("{i}: {}", line.trim()));`,
    `    }`,
    `    // Answer in the order the lines came; an empty body is an error.`,
    `    if out.is_empty() {`,
    `        return Err(Error::Empty { hint: format!("no lines in {} bytes", body.len()) });`,
    `    }`,
    `    let total: usize = out.iter().map(|l| l.len()).sum();`,
    `    tracing::debug!(lines = out.len(), bytes = total, "answered");`,
    `    Ok(Response { status: 200, lines: out, note: "ok".to_string() })`,
    `}`,
    '',
  ].join('\n');
}

// The token map from the mock's candidates: a file's status is the best
// its rows got (the real rules are the engine's `map.rs`; this only has
// to give the map component every status to draw).
const MAP_ORDER: MapStatusDto[] = ['included', 'degraded', 'banned', 'dropped', 'hidden', 'not_retrieved'];
function mapOf(cands: CannedFile[], rows: RowDto[] | null): MapNodeDto {
  const node = (name: string, path: string, file: boolean): MapNodeDto => ({
    name, path, file, tokens: 0, files: 0, status: null, why: null, counts: null, children: [], folded: 0, folded_tokens: 0,
  });
  const root = node('project', '', false);
  for (const c of cands) {
    const parts = c.path.split('/');
    let dir = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const path = parts.slice(0, i + 1).join('/');
      let next = dir.children.find((d) => d.path === path);
      if (!next) dir.children.push((next = node(parts[i] ?? path, path, false)));
      dir = next;
    }
    const f = node(parts[parts.length - 1] ?? c.path, c.path, true);
    f.tokens = c.tokens;
    f.files = 1;
    if (rows) {
      const statuses = rows.filter((r) => r.path === c.path).map((r): MapStatusDto => r.status);
      f.status = MAP_ORDER.find((s) => statuses.includes(s)) ?? 'not_retrieved';
      f.why = f.status.replace('_', ' ');
    }
    dir.children.push(f);
  }
  const total = (n: MapNodeDto) => {
    if (n.file) return;
    n.children.forEach(total);
    n.children.sort((a, b) => b.tokens - a.tokens || a.name.localeCompare(b.name));
    n.tokens = n.children.reduce((t, c) => t + c.tokens, 0);
    n.files = n.children.reduce((t, c) => t + c.files, 0);
    if (rows) {
      n.counts = { included: 0, degraded: 0, dropped: 0, hidden: 0, banned: 0, not_retrieved: 0 };
      for (const c of n.children) {
        if (c.counts) for (const k of MAP_ORDER) n.counts[k] += c.counts[k];
        else if (c.status) n.counts[c.status] += 1;
      }
    }
  };
  total(root);
  return root;
}
function findNode(n: MapNodeDto, path: string): MapNodeDto | null {
  if (n.path === path) return n;
  const inside = n.children.find((c) => path === c.path || path.startsWith(`${c.path}/`));
  return inside ? findNode(inside, path) : null;
}
function cut(n: MapNodeDto, view: MapViewDto, depth = view.depth): MapNodeDto {
  const sent = depth > 0 ? n.children.slice(0, view.per_folder) : [];
  const rest = n.children.slice(sent.length);
  return {
    ...n,
    children: sent.map((c) => cut(c, view, depth - 1)),
    folded: rest.length,
    folded_tokens: rest.reduce((t, c) => t + c.tokens, 0),
  };
}

/** The chunk `id` of a project, with its file. */
function chunkOf(root: string, id: number): { file: CannedFile; chunk: CannedChunk } | null {
  for (const file of filesOf(root)) {
    const chunk = file.chunks.find((c) => c.id === id);
    if (chunk) return { file, chunk };
  }
  return null;
}

function selectionOf(root: string): SelectionDto {
  return stored(`selection:${root}`, { pinned: [], banned: [] });
}

function teamKnobs(root: string): { knobs: KnobsDto; warnings: string[] } {
  const knobs = structuredClone(DEFAULT_KNOBS);
  if (!root.endsWith('/team')) return { knobs, warnings: [] };
  knobs.budget = 3000;
  return { knobs, warnings: ['.loupe.toml: unknown knob `colour` ignored'] };
}

function sourceOf(path: string): string {
  return Array.from({ length: 120 }, (_, i) => `// ${path} line ${i + 1}`).join('\n');
}

/** What `assemble` answers, without logging a call (the token map asks it too). */
function answer(root: string, question: string, knobs: KnobsDto, agentRequest: string | null, change: string | null, skipReading = false): AssemblyDto {
  if (root !== openRoot) throw new BackendError('not_open', `${root} is not open; open it first`);
  if (question.includes('fail')) throw new BackendError('bad_request', 'the mock was asked to fail');
  // An agent's call is re-asked with its own pins, bans and change (none here).
  const call = agentRequest ? agentCalls.find((c) => c.dto.id === agentRequest) : null;
  if (agentRequest && !call) throw new BackendError('bad_request', `no agent request "${agentRequest}" in the log`);
  const result = call
    ? cannedAssembly(root, question, knobs, { pinned: [], banned: [] }, null, skipReading)
    : cannedAssembly(root, question, knobs, selectionOf(root), change, skipReading);
  if (call) result.agent_match = call.prompt === result.prompt;
  // The secondary LLM, when on: made-up terms (the real ones come from an
  // endpoint); a question with @mentions is not sent.
  const expander = stored<ExpanderDto | null>('expander', null);
  if (expander && !agentRequest) {
    result.search_terms = question.includes('@')
      ? `search terms from ${expander.model}: none (skipped: the question @mentions what it wants)`
      : `search terms from ${expander.model}: pack_items, budget`;
  }
  return result;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let openRoot = '';
/** The question the panel asked last (what `shown_project` gives back). */
let lastQuestion = '';
/** The project an `open_project` run is indexing, until it returns. */
let indexingRoot: string | null = null;
let cancelRequested = false;
/** Steps and step time of the slow scenario's parse stage (and the staged
 * scenario's embedding). */
const SLOW_STEPS = 50;
const SLOW_STEP_MS = 100;

export const mockBackend: Backend = {
  async openProject(path, onProgress) {
    log('open_project', { path });
    if (path.includes('missing')) throw new BackendError('bad_project', `project path ${path}: does not exist`);
    indexingRoot = path;
    try {
      return await indexRun(path, onProgress);
    } finally {
      if (indexingRoot === path) indexingRoot = null;
    }
  },
  async openScanning(path) {
    log('open_scanning', { path });
    if (path.includes('missing')) throw new BackendError('bad_project', `project path ${path}: does not exist`);
    openRoot = path;
    return statusOf(path);
  },
  async openIndexed(path) {
    log('open_indexed', { path });
    if (path.includes('missing')) throw new BackendError('bad_project', `project path ${path}: does not exist`);
    // Indexed before = opened before (the recent list is the mock's memory).
    if (!stored<RecentDto[]>('recent', []).some((r) => r.root === path)) return null;
    openRoot = path;
    return statusOf(path);
  },
  async cancelIndex(root) {
    log('cancel_index', { root });
    cancelRequested = true;
    return true;
  },
  async projectStatus(root) {
    log('project_status', { root });
    return statusOf(root);
  },
  async diagnostics(root) {
    log('diagnostics', { root });
    return [{ path: 'assets/logo.bin', kind: 'binary', message: 'binary file (NUL byte)' }];
  },
  async models() {
    return structuredClone(canned.models);
  },
  async builtinInstructions() {
    return { ...BUILTIN_INSTRUCTIONS };
  },
  async defaultKnobs() {
    return structuredClone(DEFAULT_KNOBS);
  },
  async assemble(root, question, knobs, agentRequest, change, skipReading) {
    log('assemble', { root, question, knobs, agentRequest: agentRequest ?? null, change: change ?? null, ...(skipReading ? { skipReading } : {}) });
    if (!agentRequest) lastQuestion = question;
    // Answered now, delivered when the gate opens (a slow engine).
    const got = answer(root, question, knobs, agentRequest ?? null, change ?? null, skipReading ?? false);
    await heldBack(question);
    return got;
  },
  async cancelQuestion(root, question) {
    log('cancel_question', { root, question });
    const stopped = held.filter((h) => h.question === question);
    held = held.filter((h) => h.question !== question);
    for (const h of stopped) h.cancel();
    return stopped.length > 0;
  },
  async goldenRun(root, knobs) {
    log('golden_run', { root, knobs });
    if (root !== openRoot) throw new BackendError('not_open', `${root} is not open; open it first`);
    if (!root.endsWith('/golden')) return { file: '.loupe/golden.toml', present: false, found: 0, expected: 0, questions: [] };
    // Each question's expected file, found while the assembly includes it.
    const questions = [
      { line: 2, ask: 'how does packing work?', expect: 'src/pack.rs' },
      { line: 6, ask: 'where are the tests?', expect: 'tests/pack_test.rs' },
    ].map((g) => {
      const a = cannedAssembly(root, g.ask, knobs, selectionOf(root), null);
      const row = a.rows.find((r) => r.path === g.expect);
      const found = row?.status === 'included' || row?.status === 'degraded';
      return {
        line: g.line,
        ask: g.ask,
        used: a.report.used,
        budget: a.report.budget,
        unit: a.report.unit,
        passed: found,
        error: null,
        items: [
          {
            kind: 'file',
            name: g.expect,
            found,
            outcome: found ? `rank ${row?.rank}, LOD 0` : row ? `dropped: ${row.reason} (rank ${row.rank})` : 'not retrieved',
            rank: row?.rank ?? null,
            lod: found ? 0 : null,
          },
        ],
      };
    });
    const found = questions.filter((q) => q.passed).length;
    return { file: '.loupe/golden.toml', present: true, found, expected: questions.length, questions };
  },
  async tokenMap(root, question, knobs, agentRequest, change, view) {
    log('token_map', { root, question, knobs, agentRequest, change, view });
    if (root !== openRoot) throw new BackendError('not_open', `${root} is not open; open it first`);
    const asked = question.trim() !== '' || change !== null || agentRequest !== null;
    const rows = asked ? answer(root, question, knobs, agentRequest, change).rows : [];
    // The map asks its question as the panel does, behind the same gate.
    if (asked) await heldBack(question);
    const node = findNode(mapOf(filesOf(root), asked ? rows : null), view.under);
    if (!node) throw new BackendError('bad_request', `"${view.under}" is not an indexed folder or file of ${root}`);
    return cut(node, view);
  },
  async agentRequests(root, known) {
    log('agent_requests', { root, known });
    const version = String(agentCalls.length);
    const changed = known !== version;
    return {
      version,
      changed,
      requests: changed ? agentCalls.map((c) => c.dto).reverse() : [],
      skipped: 0,
      agent_knobs: agentKnobsSaved !== null,
    };
  },
  async agentRequest(root, id) {
    log('agent_request', { root, id });
    const call = agentCalls.find((c) => c.dto.id === id);
    if (!call) throw new BackendError('bad_request', `no agent request "${id}" in the log`);
    return { request: call.dto, knobs: structuredClone(call.knobs), pinned: [], banned: [], items: [], items_total: 0 };
  },
  async saveAgentKnobs(root, knobs) {
    log('save_agent_knobs', { root, knobs });
    agentKnobsSaved = knobs ? structuredClone(knobs) : null;
  },
  async projectSettings(root) {
    log('project_settings', { root });
    const team = teamKnobs(root);
    const changes = stored<Partial<KnobsDto>>(`knobs:${root}`, {});
    return {
      knobs: { ...team.knobs, ...changes },
      team_knobs: team.knobs,
      team_file: root.endsWith('/team'),
      warnings: team.warnings,
      selection: selectionOf(root),
    };
  },
  async saveKnobs(root, knobs) {
    log('save_knobs', { root, knobs });
    const team = teamKnobs(root).knobs as unknown as Record<string, unknown>;
    const changes = Object.fromEntries(
      Object.entries(knobs).filter(([k, v]) => JSON.stringify(team[k]) !== JSON.stringify(v)),
    );
    store(`knobs:${root}`, changes);
  },
  async mark(root, target, mark) {
    log('mark', { root, target, mark });
    const sel = selectionOf(root);
    // Key order differs between the UI's targets and the canned rows' own.
    const same = (t: TargetDto) => stable(t) === stable(target);
    sel.pinned = sel.pinned.filter((t) => !same(t));
    sel.banned = sel.banned.filter((t) => !same(t));
    if (mark === 'pin') sel.pinned.push(target);
    if (mark === 'ban') sel.banned.push(target);
    store(`selection:${root}`, sel);
    return sel;
  },
  async expanderSettings() {
    return stored<ExpanderDto | null>('expander', null);
  },
  async saveExpanderSettings(settings) {
    log('save_expander_settings', { settings });
    if (settings === null) {
      store('expander', null);
      return null;
    }
    if (!/^https?:\/\//.test(settings.base_url.trim())) {
      throw new BackendError('bad_request', `the endpoint "${settings.base_url}" must be an http:// or https:// URL`);
    }
    const before = stored<ExpanderDto | null>('expander', null);
    const saved: ExpanderDto = {
      base_url: settings.base_url.trim(),
      model: settings.model.trim(),
      has_key: settings.api_key === null ? (before?.has_key ?? false) : settings.api_key.trim() !== '',
      timeout_ms: settings.timeout_ms,
    };
    store('expander', saved);
    return saved;
  },
  async presets() {
    return stored<PresetDto[]>('presets', []);
  },
  async savePreset(name, knobs) {
    log('save_preset', { name, knobs });
    if (!name.trim()) throw new BackendError('bad_request', 'a preset needs a name');
    const list = stored<PresetDto[]>('presets', []).filter((p) => p.name !== name.trim());
    list.push({ name: name.trim(), knobs });
    list.sort((a, b) => a.name.localeCompare(b.name));
    store('presets', list);
    return list;
  },
  async deletePreset(name) {
    const list = stored<PresetDto[]>('presets', []).filter((p) => p.name !== name);
    store('presets', list);
    return list;
  },
  async recentProjects() {
    return stored<RecentDto[]>('recent', []);
  },
  async forgetRecent(root) {
    const list = stored<RecentDto[]>('recent', []).filter((r) => r.root !== root);
    store('recent', list);
    return list;
  },
  async chunkDetail(root, id, lod, knobs) {
    log('chunk_detail', { root, id, lod, knobs });
    const found = chunkOf(root, id);
    if (!found) throw new BackendError('bad_request', `chunk ${id} is no longer in the index`);
    const { file, chunk: c } = found;
    // Made-up text: the canned index has the chunks' places, not their bodies.
    const body = lod >= 4 ? `fn ${c.symbol ?? 'item'}(…) { … }` : `fn ${c.symbol ?? 'item'}() {\n    // the whole body\n}`;
    return {
      id,
      path: file.path,
      start_line: c.start_line,
      end_line: c.end_line,
      symbol: c.symbol,
      lod,
      rendered: body,
      redactions: 0,
      source: root.endsWith('/unreadable') ? null : sourceOf(file.path),
      source_error: root.endsWith('/unreadable') ? `reading ${file.path}: permission denied` : null,
      stale: root.endsWith('/stale') && file.path === 'src/pack.rs',
    };
  },
  async complete(root, typed, limit) {
    log('complete', { root, typed, limit });
    const needle = typed.replace(/^@/, '').toLowerCase();
    if (!needle) return [];
    const indexed = filesOf(root);
    const files: CompletionDto[] = indexed
      .filter((f) => f.path.toLowerCase().includes(needle))
      .map((f) => ({ kind: 'file', value: f.path }));
    const names = new Set(indexed.flatMap((f) => f.chunks.map((c) => c.symbol ?? '')));
    const symbols: CompletionDto[] = [...names]
      .filter((n) => n.toLowerCase().includes(needle))
      .map((n) => ({ kind: 'symbol', value: n }));
    return [...files, ...symbols].slice(0, limit);
  },
  async watchProject(root, onEvent) {
    log('watch_project', { root });
    watchHandler = onEvent;
  },
  async shownProject() {
    log('shown_project', {});
    const shown = stored<{ root: string; question: string; indexing: boolean } | null>('engine-shown', null);
    localStorage.removeItem('loupe-mock:engine-shown');
    if (!shown) return null;
    openRoot = shown.root;
    lastQuestion = shown.question;
    return { status: statusOf(shown.root), question: shown.question, indexing: shown.indexing };
  },
  async unwatchProject(root) {
    log('unwatch_project', { root });
    const had = watchHandler !== null;
    watchHandler = null;
    return had;
  },
  async savePrompt(text, fileName) {
    log('save_prompt', { fileName });
    const path = `/mock/out/${fileName}`;
    window.__loupeMock.saved.push({ path, text });
    return path;
  },
  async pickFolder() {
    return '/mock/small';
  },
  async copy(text) {
    window.__loupeMock.copied.push(text);
  },
  async onFolderDrop() {
    return () => {};
  },
};
