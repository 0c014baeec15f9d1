// An in-memory backend for `vite build --mode mock`: deterministic data,
// scenarios picked by the opened path, and a call log on `window.__loupeMock`
// that the Playwright tests read. Never part of the production bundle.
//
//   …missing…  → open fails with `bad_project`
//   …/many     → 2,000 candidates
//   …/long     → a candidate with a very long path
//   …/empty    → no candidates
//   …/slow     → indexing takes ~5 s of progress and can be cancelled
//   …/team     → a project with a `.loupe.toml` (budget 3000, one bad key)
//   otherwise  → 12 candidates over src/, tests/ and docs/
// A question containing "fail" makes `assemble` fail with `bad_request`.
// Tests make an agent's `loupe mcp` call with
// `window.__loupeMock.agentCall(question, knobs)`; it is assembled by the
// mock as the call would be and listed by `agentRequests`.
// Pins, bans, saved knobs, presets and recent projects live in
// localStorage, so a reload behaves like a restart; tests fire watcher
// events with `window.__loupeMock.emitWatch(event)`.

import {
  BackendError,
  type AgentRequestDto,
  type AssemblyDto,
  type Backend,
  type CompletionDto,
  type KnobsDto,
  type MapNodeDto,
  type MapStatusDto,
  type StatusDto,
  type MapViewDto,
  type ExpanderDto,
  type PresetDto,
  type QuestionTypeDto,
  type RecentDto,
  type RowDto,
  type RowStatus,
  type SelectionDto,
  type TargetDto,
  type WatchEventDto,
} from './types';

interface Call {
  cmd: string;
  args: unknown;
}
declare global {
  interface Window {
    __loupeMock: {
      calls: Call[];
      copied: string[];
      saved: { path: string; text: string }[];
      emitWatch: (e: WatchEventDto) => void;
      agentCall: (question: string, knobs?: Partial<KnobsDto>) => void;
      agentKnobs: () => KnobsDto | null;
    };
  }
}
let watchHandler: ((e: WatchEventDto) => void) | null = null;
/** Agents' calls on the open project, oldest first, with what they got. */
const agentCalls: { dto: AgentRequestDto; knobs: KnobsDto; prompt: string }[] = [];
let agentKnobsSaved: KnobsDto | null = null;
window.__loupeMock = {
  calls: [],
  copied: [],
  saved: [],
  emitWatch: (e) => watchHandler?.(e),
  agentCall(question, over = {}) {
    const root = openRoot;
    const knobs = { ...structuredClone(agentKnobsSaved ?? teamKnobs(root).knobs), budget: 4000, ...over };
    const got = mockAssemble(root, question, knobs);
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
};

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

const DEFAULT_KNOBS: KnobsDto = {
  model: 'gpt-4o',
  models: [],
  budget: null,
  budget_unit: 'tokens',
  path_weights: [],
  // The real default is AGENTS.md and friends; the mock's fixture has a README.
  primers: ['README.md'],
  primer_boost: 0.25,
  k: null,
  lod: true,
  format: 'xml',
  recency_weight: 0.05,
  recency_half_life_days: 30,
  min_score: null,
  answer_reserve: 4096,
  toggles: { sources: true, scores: false, structured: false, lost_in_middle: false, diff_as_code: false },
  sanitize: true,
  redact_secrets: true,
  intent: null,
  question_type: null,
  instructions: {},
};
const MODEL_BUDGET = 8000;
/** The mock's built-in preambles (the real ones are the engine's). */
const BUILTIN_INSTRUCTIONS: Partial<Record<QuestionTypeDto, string>> = {
  implementation: 'Give concrete code.',
  architectural: 'Give the big picture.',
  debugging: 'Find the root cause.',
  code_explanation: 'Answer using the code below.',
  feature_request: 'Plan the feature.',
  review: 'Review this change.',
};

interface Candidate {
  path: string;
  symbol: string | null;
  relevance: number;
  tokens: number;
}

/** Projects of the staged scenario whose vectors have landed. */
const vectorsLanded = new Set<string>();

/** A project's status as the mock keeps it. */
function statusOf(root: string): StatusDto {
  const n = candidatesFor(root).length;
  const ready = !root.endsWith('/staged') || vectorsLanded.has(root);
  return {
    root,
    files: n,
    chunks: n,
    generation: 1,
    vectors_ready: ready,
    vector_model: 'loupe-code',
    vector_chunks: ready ? n : 0,
    diagnostics: 1,
    recovered: [],
    history_commits: 128,
    history_note: null,
  };
}

function candidatesFor(root: string): Candidate[] {
  if (root.endsWith('/empty')) return [];
  if (root.endsWith('/big')) {
    // The highlighting benchmark's project: 400 Rust chunks of ~250 tokens.
    return Array.from({ length: 400 }, (_, i) => ({
      path: `src/part_${Math.floor(i / 20)}/unit_${i}.rs`,
      symbol: `handle_${i}`,
      relevance: 1 - i / 400,
      tokens: 250,
    }));
  }
  if (root.endsWith('/many')) {
    return Array.from({ length: 2000 }, (_, i) => ({
      path: `src/module_${Math.floor(i / 10)}/file_${i}.rs`,
      symbol: `function_${i}`,
      relevance: 1 - i / 2000,
      tokens: 40 + (i % 7) * 10,
    }));
  }
  const base: Candidate[] = [
    ['src/pack.rs', 'pack_items', 0.9, 300],
    ['src/render.rs', 'render', 0.7, 250],
    ['src/rank.rs', 'rank', 0.65, 400],
    ['src/fit.rs', 'fit', 0.6, 350],
    ['src/guard.rs', 'guard', 0.5, 500],
    ['tests/pack_test.rs', 'pack_items_respects_budget', 0.55, 200],
    ['tests/render_test.rs', 'renders_xml', 0.45, 220],
    ['docs/packing.md', null, 0.4, 180],
    ['docs/knobs.md', null, 0.35, 260],
    ['src/models.rs', 'builtin', 0.3, 150],
    ['src/tokens.rs', 'count', 0.25, 120],
    ['README.md', null, 0.2, 400],
  ].map(([path, symbol, relevance, tokens]) => ({
    path: path as string,
    symbol: symbol as string | null,
    relevance: relevance as number,
    tokens: tokens as number,
  }));
  // The staged-readiness scenario: one chunk only the vectors find (last,
  // so the others keep their ids, as chunk ids do).
  if (root.endsWith('/staged') && vectorsLanded.has(root)) {
    base.push({ path: 'src/steal.rs', symbol: 'steal_work', relevance: 0.85, tokens: 300 });
  }
  if (root.endsWith('/long')) {
    const deep = Array.from({ length: 24 }, (_, i) => `very_long_directory_name_${i}`).join('/');
    base.unshift({ path: `${deep}/worker.rs`, symbol: 'deep', relevance: 0.95, tokens: 100 });
  }
  return base;
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob.charAt(i);
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

// The token map from the mock's candidates: a file's status is the best
// its rows got (the real rules are the engine's `map.rs`; this only has
// to give the map component every status to draw).
const MAP_ORDER: MapStatusDto[] = ['included', 'degraded', 'banned', 'dropped', 'hidden', 'not_retrieved'];
function mapOf(cands: Candidate[], rows: RowDto[] | null): MapNodeDto {
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

/** The engine's verdict sentence (`report::Verdict::describe`) for the mock's rows. */
function verdictOf(rows: RowDto[], droppedSize: number, unit: string): string {
  const inside = rows.filter((r) => r.status === 'included' || r.status === 'degraded').length;
  const kinds = new Map<string, number>();
  for (const r of rows.filter((x) => x.status === 'dropped' || x.status === 'hidden')) {
    const kind = r.status === 'hidden' ? 'hidden by a path weight' : (r.reason ?? '').startsWith('over budget') ? 'over budget' : (r.reason ?? '');
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const out = [...kinds].sort((a, b) => b[1] - a[1]);
  const total = out.reduce((t, [, n]) => t + n, 0);
  const head = `${droppedSize > 0 ? 'Truncated' : 'Fits'}: ${inside} in the prompt`;
  const left = total === 0 ? '; nothing left out.' : `; ${total} left out: ${out.map(([k, n]) => `${n} ${k}`).join(', ')}.`;
  return head + left + (droppedSize > 0 ? ` The over-budget ones need ${droppedSize} ${unit} more.` : '');
}

// The index's language names by extension, as far as the mock's files go.
function languageOf(path: string): string {
  return path.endsWith('.rs') ? 'rust' : path.endsWith('.md') ? 'markdown' : 'text';
}
/** A document's body in the mock prompt: a line of code in its language. */
function codeOf(r: RowDto): string {
  if (r.path.startsWith('src/part_')) {
    // ~250 tokens of Rust: the benchmark's documents.
    const f = r.symbol ?? 'item';
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
  if (r.language === 'rust') return `pub fn ${r.symbol ?? 'item'}(items: &[u32]) -> usize { /* … */ 0 }\n`;
  if (r.language === 'markdown') return `# ${r.path}\n`;
  return `${r.path}\n`;
}

/** The preamble of the mock's question type: the user's own, else the built-in. */
function instructionsFor(knobs: KnobsDto): string {
  const kind = knobs.question_type ?? 'code_explanation';
  return knobs.instructions[kind]?.trim() || BUILTIN_INSTRUCTIONS[kind] || '';
}

function mockAssemble(root: string, question: string, knobs: KnobsDto): AssemblyDto {
  const rules = knobs.path_weights
    .filter((w) => w.glob.trim() !== '')
    .map((w) => ({ ...w, re: globToRegExp(w.glob.trim()) }));
  const custom = knobs.models.find((m) => m.name.trim().toLowerCase() === knobs.model);
  const budget = knobs.budget ?? custom?.default_budget ?? MODEL_BUDGET;
  const sel = selectionOf(root);
  const markOf = (c: Candidate, i: number) => {
    const hit = (t: TargetDto) =>
      t.kind === 'folder'
        ? c.path.startsWith(`${t.path}/`)
        : t.path === c.path && (t.kind === 'file' || t.start_line === startLine(i));
    const pin = sel.pinned.find(hit);
    if (pin) return { mark: 'pin' as const, target: pin };
    const ban = sel.banned.find(hit);
    return ban ? { mark: 'ban' as const, target: ban } : null;
  };
  const all = candidatesFor(root).map((c, i) => ({ c, i, marked: markOf(c, i) }));
  const scored = all
    .filter((x) => x.marked?.mark !== 'ban')
    .map(({ c, i, marked }) => {
      const rule = rules.find((r) => r.re.test(c.path));
      const pathWeight = rule ? rule.weight : 1;
      const name = c.path.split('/').pop() ?? c.path;
      const primer = knobs.primers.some((p) => p === name || p === c.path) ? knobs.primer_boost : 0;
      const pinned = marked?.mark === 'pin';
      const score = pinned ? 1 : Math.min(0.9, (c.relevance + primer) * pathWeight);
      return { c, i, rule, pathWeight, primer, score, pinned, marked };
    });
  scored.sort((a, b) => b.score - a.score);
  let used = 200;
  let dropped = 0;
  let droppedSize = 0;
  const rows: RowDto[] = scored.map((s, rank) => {
    let status: RowStatus = 'included';
    let reason: string | null = null;
    if (s.pinned) used += s.c.tokens;
    else if (s.pathWeight === 0 && s.rule) {
      status = 'hidden';
      reason = `hidden by path weight ${s.rule.glob.trim()}`;
    } else if (knobs.min_score !== null && s.score < knobs.min_score) {
      status = 'dropped';
      reason = 'below the minimum score';
    } else if (used + s.c.tokens > budget) {
      status = 'dropped';
      reason = `over budget (needs ${s.c.tokens})`;
    } else used += s.c.tokens;
    if (status !== 'included') {
      dropped++;
      if (status === 'dropped') droppedSize += s.c.tokens;
    }
    const rel = s.c.relevance;
    return {
      id: s.i + 1,
      rank: rank + 1,
      path: s.c.path,
      start_line: startLine(s.i),
      end_line: startLine(s.i) + 8,
      symbol: s.c.symbol,
      language: languageOf(s.c.path),
      section: s.c.path.startsWith('docs/') ? 'retrieved_docs' : 'retrieved_code',
      score: {
        score: s.score,
        lexical: rel * 0.5,
        vector: rel * 0.3,
        symbol: rel * 0.2,
        graph: 0,
        path_terms: 0,
        file: rel * 0.1,
        history: 0,
        primer: s.primer,
        recency: 0,
        multiplier: s.pathWeight,
        path_weight: s.pathWeight,
        path_rule: s.rule ? s.rule.glob.trim() : null,
        pinned: s.pinned,
      },
      lod: status === 'included' ? 0 : null,
      tokens: status === 'included' ? s.c.tokens : 0,
      status,
      reason,
      marked: s.marked,
    };
  });
  for (const b of all.filter((x) => x.marked?.mark === 'ban')) {
    rows.push({
      id: b.i + 1,
      rank: rows.length + 1,
      path: b.c.path,
      start_line: startLine(b.i),
      end_line: startLine(b.i) + 8,
      symbol: b.c.symbol,
      language: languageOf(b.c.path),
      section: '',
      score: { score: 0, lexical: 0, vector: 0, symbol: 0, graph: 0, path_terms: 0, file: 0, history: 0, primer: 0, recency: 0, multiplier: 0, path_weight: 0, path_rule: null, pinned: false },
      lod: null,
      tokens: 0,
      status: 'banned',
      reason: 'banned by you',
      marked: b.marked,
    });
  }
  const included = rows.filter((r) => r.status === 'included');
  const source = (r: RowDto) => (knobs.toggles.sources ? ` source="@${r.path}:${r.start_line}-${r.end_line}"` : '');
  const secret = knobs.redact_secrets ? '[REDACTED:aws-access-key]' : 'AKIAIOSFODNN7EXAMPLF';
  const prompt = [
    `<instructions>${instructionsFor(knobs)}</instructions>`,
    '<documents>',
    ...included.slice(0, 200).map((r) => `<document${source(r)}>\n${codeOf(r)}</document>`),
    '</documents>',
    root.endsWith('/secret') ? `<document>key = ${secret}</document>` : '',
    `<question>${question}</question>`,
  ].join('\n');
  const stale = root.endsWith('/stale') ? ['src/pack.rs'] : [];
  const missing = sel.pinned.filter((t) => !all.some((x) => x.c.path === t.path));
  return {
    rows,
    prompt,
    report: {
      model: knobs.model,
      unit: knobs.budget_unit,
      budget,
      usable: budget,
      answer_reserve: knobs.answer_reserve,
      used,
      was_truncated: rows.some((r) => r.status === 'dropped'),
      dropped_count: dropped,
      dropped_size: droppedSize,
      sections: [
        { section: 'instructions', size: 120 },
        { section: 'retrieved_code', size: used - 200 },
        { section: 'question', size: 80 },
      ],
      joins: 0,
      verdict: verdictOf(rows, droppedSize, knobs.budget_unit),
      question_type: knobs.question_type ?? 'code_explanation',
      intent: knobs.intent ?? 'code',
      categories: ['architecture'],
      warnings: [
        ...missing.map((t) => `pinned ${t.path} names nothing in the index now`),
        ...stale.map((p) => `stale: ${p} changed since it was indexed`),
      ],
      redactions: root.endsWith('/secret') && knobs.redact_secrets ? 1 : 0,
    },
    stale,
    agent_match: null,
    change: null,
    search_terms: null,
  };
}

const startLine = (i: number) => 1 + (i % 50) * 10;

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
function answer(root: string, question: string, knobs: KnobsDto, agentRequest: string | null, change: string | null): AssemblyDto {
  if (change && !['unstaged', 'staged'].includes(change) && !/^\S+\.\.\S+$/.test(change)) {
    throw new BackendError('bad_request', `change "${change}": expected \`unstaged\`, \`staged\` or a range \`BASE..HEAD\``);
  }
  if (root !== openRoot) throw new BackendError('not_open', `${root} is not open; open it first`);
  if (question.includes('fail')) throw new BackendError('bad_request', 'the mock was asked to fail');
  const result = mockAssemble(root, question || 'Review this change.', knobs);
  if (change) {
    // The changed hunk of src/pack.rs is pinned; the diff leads the prompt.
    const spec = change === 'unstaged' || change === 'staged' ? `${change} changes` : change;
    result.change = { spec, files: 2, hunks: 3, added_lines: 7, pinned: 1 };
    const pack = result.rows.find((r) => r.path === 'src/pack.rs');
    if (pack) pack.score = { ...pack.score, score: 1, pinned: true };
    const hunk = knobs.toggles.diff_as_code ? '+ 12 |     used += item;' : '+    used += item;';
    result.prompt = `<diff>\n${hunk}\n</diff>\n${result.prompt}`;
  }
  if (agentRequest) {
    const call = agentCalls.find((c) => c.dto.id === agentRequest);
    if (!call) throw new BackendError('bad_request', `no agent request "${agentRequest}" in the log`);
    result.agent_match = call.prompt === result.prompt;
  }
  // The secondary LLM, when on: canned terms; a question with @mentions is not sent.
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
let cancelRequested = false;
/** Steps and step time of the slow scenario's parse stage (and the staged
 * scenario's embedding). */
const SLOW_STEPS = 50;
const SLOW_STEP_MS = 100;

export const mockBackend: Backend = {
  async openProject(path, onProgress) {
    log('open_project', { path });
    if (path.includes('missing')) throw new BackendError('bad_project', `project path ${path}: does not exist`);
    cancelRequested = false;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
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
    const n = candidatesFor(path).length;
    return {
      status: statusOf(path),
      files_changed: n,
      files_unchanged: 0,
      embedding_incomplete: false,
    };
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
    return [
      { name: 'gpt-4o', context_window: 128000, default_budget: MODEL_BUDGET, encoding: 'o200k_base', safety_margin: 0, exact: true },
      { name: 'claude-sonnet-4', context_window: 200000, default_budget: 12000, encoding: 'cl100k_base', safety_margin: 0.15, exact: false },
    ];
  },
  async builtinInstructions() {
    return { ...BUILTIN_INSTRUCTIONS };
  },
  async defaultKnobs() {
    return structuredClone(DEFAULT_KNOBS);
  },
  async assemble(root, question, knobs, agentRequest, change) {
    log('assemble', { root, question, knobs, agentRequest: agentRequest ?? null, change: change ?? null });
    return answer(root, question, knobs, agentRequest ?? null, change ?? null);
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
      const a = mockAssemble(root, g.ask, knobs);
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
    const node = findNode(mapOf(candidatesFor(root), asked ? rows : null), view.under);
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
    const same = (t: TargetDto) => JSON.stringify(t) === JSON.stringify(target);
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
    const i = id - 1;
    const c = candidatesFor(root)[i];
    if (!c) throw new BackendError('bad_request', `chunk ${id} is no longer in the index`);
    const start = startLine(i);
    const body = lod >= 4 ? `fn ${c.symbol ?? 'item'}(…) { … }` : `fn ${c.symbol ?? 'item'}() {\n    // the whole body\n}`;
    return {
      id,
      path: c.path,
      start_line: start,
      end_line: start + 8,
      symbol: c.symbol,
      lod,
      rendered: body,
      redactions: 0,
      source: root.endsWith('/unreadable') ? null : sourceOf(c.path),
      source_error: root.endsWith('/unreadable') ? `reading ${c.path}: permission denied` : null,
      stale: root.endsWith('/stale') && c.path === 'src/pack.rs',
    };
  },
  async complete(root, typed, limit) {
    log('complete', { root, typed, limit });
    const needle = typed.replace(/^@/, '').toLowerCase();
    if (!needle) return [];
    const cands = candidatesFor(root);
    const files: CompletionDto[] = cands
      .filter((c) => c.path.toLowerCase().includes(needle))
      .map((c) => ({ kind: 'file', value: c.path }));
    const symbols: CompletionDto[] = cands
      .filter((c) => c.symbol?.toLowerCase().includes(needle))
      .map((c) => ({ kind: 'symbol', value: c.symbol ?? '' }));
    return [...files, ...symbols].slice(0, limit);
  },
  async watchProject(root, onEvent) {
    log('watch_project', { root });
    watchHandler = onEvent;
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
