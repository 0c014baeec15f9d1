// An in-memory backend for `vite build --mode mock`: deterministic data,
// scenarios picked by the opened path, and a call log on `window.__loupeMock`
// that the Playwright tests read. Never part of the production bundle.
//
//   …missing…  → open fails with `bad_project`
//   …/many     → 2,000 candidates
//   …/long     → a candidate with a very long path
//   …/empty    → no candidates
//   …/slow     → indexing takes ~5 s of progress and can be cancelled
//   otherwise  → 12 candidates over src/, tests/ and docs/
// A question containing "fail" makes `assemble` fail with `bad_request`.

import {
  BackendError,
  type AssemblyDto,
  type Backend,
  type KnobsDto,
  type RowDto,
  type RowStatus,
} from './types';

interface Call {
  cmd: string;
  args: unknown;
}
declare global {
  interface Window {
    __loupeMock: { calls: Call[]; copied: string[] };
  }
}
window.__loupeMock = { calls: [], copied: [] };
const log = (cmd: string, args: unknown) =>
  window.__loupeMock.calls.push({ cmd, args: JSON.parse(JSON.stringify(args ?? null)) });

const DEFAULT_KNOBS: KnobsDto = {
  model: 'gpt-4o',
  budget: null,
  budget_unit: 'tokens',
  path_weights: [],
  primer_boost: 0.25,
  k: 20,
  lod: true,
  format: 'xml',
};
const MODEL_BUDGET = 8000;

interface Candidate {
  path: string;
  symbol: string | null;
  relevance: number;
  tokens: number;
}

function candidatesFor(root: string): Candidate[] {
  if (root.endsWith('/empty')) return [];
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
  if (root.endsWith('/long')) {
    const deep = Array.from({ length: 24 }, (_, i) => `very_long_directory_name_${i}`).join('/');
    base.unshift({ path: `${deep}/an_extremely_long_file_name_for_testing.rs`, symbol: 'deep', relevance: 0.95, tokens: 100 });
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

function mockAssemble(root: string, question: string, knobs: KnobsDto): AssemblyDto {
  const rules = knobs.path_weights
    .filter((w) => w.glob.trim() !== '')
    .map((w) => ({ ...w, re: globToRegExp(w.glob.trim()) }));
  const budget = knobs.budget ?? MODEL_BUDGET;
  const scored = candidatesFor(root).map((c, i) => {
    const rule = rules.find((r) => r.re.test(c.path));
    const pathWeight = rule ? rule.weight : 1;
    const primer = c.path === 'README.md' ? knobs.primer_boost : 0;
    const score = Math.min(0.9, (c.relevance + primer) * pathWeight);
    return { c, i, rule, pathWeight, primer, score };
  });
  scored.sort((a, b) => b.score - a.score);
  let used = 200;
  let dropped = 0;
  let droppedSize = 0;
  const rows: RowDto[] = scored.map((s, rank) => {
    let status: RowStatus = 'included';
    let reason: string | null = null;
    if (s.pathWeight === 0 && s.rule) {
      status = 'hidden';
      reason = `hidden by path weight ${s.rule.glob.trim()}`;
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
      start_line: 1 + (s.i % 50) * 10,
      end_line: 9 + (s.i % 50) * 10,
      symbol: s.c.symbol,
      section: s.c.path.startsWith('docs/') ? 'retrieved_docs' : 'retrieved_code',
      score: {
        score: s.score,
        lexical: rel * 0.5,
        vector: rel * 0.3,
        symbol: rel * 0.2,
        graph: 0,
        path_terms: 0,
        primer: s.primer,
        recency: 0,
        multiplier: s.pathWeight,
        path_weight: s.pathWeight,
        path_rule: s.rule ? s.rule.glob : null,
        pinned: false,
      },
      lod: status === 'included' ? 0 : null,
      tokens: status === 'included' ? s.c.tokens : 0,
      status,
      reason,
    };
  });
  const included = rows.filter((r) => r.status === 'included');
  const prompt = [
    '<instructions>Answer using the code below.</instructions>',
    '<documents>',
    ...included.slice(0, 200).map((r) => `<document source="@${r.path}:${r.start_line}-${r.end_line}">…</document>`),
    '</documents>',
    `<question>${question}</question>`,
  ].join('\n');
  return {
    rows,
    prompt,
    report: {
      model: knobs.model,
      unit: knobs.budget_unit,
      budget,
      usable: budget,
      used,
      was_truncated: rows.some((r) => r.status === 'dropped'),
      dropped_count: dropped,
      dropped_size: droppedSize,
      sections: [
        { section: 'instructions', size: 120 },
        { section: 'retrieved_code', size: used - 200 },
        { section: 'question', size: 80 },
      ],
      question_type: 'explanation',
      intent: 'code',
      categories: ['architecture'],
      warnings: [],
      redactions: 0,
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let openRoot = '';
let cancelRequested = false;
/** Steps and step time of the slow scenario's parse stage. */
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
    const stages: [string, number][] = [['walk', 12], ['parse', 12], ['commit', 1], ['done', 1]];
    for (const [stage, total] of stages) {
      onProgress({ stage, done: total, total, elapsed_ms: elapsed() });
      await sleep(60);
    }
    openRoot = path;
    const n = candidatesFor(path).length;
    return {
      status: { root: path, files: n, chunks: n, generation: 1, vectors_ready: true, diagnostics: 1, recovered: [] },
      files_changed: n,
      files_unchanged: 0,
      embedding_incomplete: false,
    };
  },
  async cancelIndex(root) {
    log('cancel_index', { root });
    cancelRequested = true;
    return true;
  },
  async projectStatus(root) {
    log('project_status', { root });
    const n = candidatesFor(root).length;
    return { root, files: n, chunks: n, generation: 1, vectors_ready: true, diagnostics: 1, recovered: [] };
  },
  async diagnostics(root) {
    log('diagnostics', { root });
    return [{ path: 'assets/logo.bin', kind: 'binary', message: 'binary file (NUL byte)' }];
  },
  async models() {
    return [
      { name: 'gpt-4o', context_window: 128000, default_budget: MODEL_BUDGET },
      { name: 'claude-sonnet-4', context_window: 200000, default_budget: 12000 },
    ];
  },
  async defaultKnobs() {
    return structuredClone(DEFAULT_KNOBS);
  },
  async assemble(root, question, knobs) {
    log('assemble', { root, question, knobs });
    if (root !== openRoot) throw new BackendError('not_open', `${root} is not open; open it first`);
    if (question.includes('fail')) throw new BackendError('bad_request', 'the mock was asked to fail');
    return mockAssemble(root, question, knobs);
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
