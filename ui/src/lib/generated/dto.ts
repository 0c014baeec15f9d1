// Generated from src-tauri/src/dto.rs by `make types`. Do not edit.

export type ErrorCode = "bad_project" | "not_open" | "cancelled" | "bad_request" | "engine" | "storage";

export type ErrorDto = { 
/**
 * Stable code.
 */
code: ErrorCode, 
/**
 * Human-readable detail, shown as is.
 */
message: string, };

export type IndexEvent = { 
/**
 * `walk`, `parse`, `commit`, `ready` (questions can be asked: the
 * lexical index, symbols and graph are committed), `embed`, `vectors`,
 * `wait` or `done`.
 */
stage: string, 
/**
 * Items done in this stage.
 */
done: number, 
/**
 * Items in this stage, when known.
 */
total: number | null, 
/**
 * Milliseconds since indexing started (the UI derives an ETA from it).
 */
elapsed_ms: number, };

export type StatusDto = { 
/**
 * The project folder (canonical); the key for every later command.
 */
root: string, 
/**
 * Indexed files.
 */
files: number, 
/**
 * Indexed chunks.
 */
chunks: number, 
/**
 * Catalog generation (changes when the index changes).
 */
generation: number, 
/**
 * Whether every chunk has a vector.
 */
vectors_ready: boolean, 
/**
 * The embedding model, `null` when vectors are off.
 */
vector_model: string | null, 
/**
 * Chunks that have a vector (they arrive after the lexical stage).
 */
vector_chunks: number, 
/**
 * How questions search the vectors: `null` for the exact scan of
 * every point (a project below the graph's size), the share built
 * (0–99) while a graph is built in the background and the scan still
 * answers, 100 once the graph answers.
 */
vector_graph: number | null, 
/**
 * Skipped or degraded files in the last run.
 */
diagnostics: number, 
/**
 * What opening had to repair.
 */
recovered: Array<string>, 
/**
 * Commits whose messages retrieval uses as evidence.
 */
history_commits: number, 
/**
 * Why there is no commit history, when there is none.
 */
history_note: string | null, 
/**
 * What the last index run got from the team's shared store; `null`
 * when none is configured (or no run has used it yet).
 */
shared: SharedDto | null, };

export type SharedDto = { 
/**
 * The store's URL, without a password.
 */
store: string, 
/**
 * Files whose parse came from the store.
 */
files_pulled: number, 
/**
 * Chunks whose vector came from the store.
 */
vectors_pulled: number, 
/**
 * Files parsed here and written to the store.
 */
files_pushed: number, 
/**
 * Vectors computed here and written to the store.
 */
vectors_pushed: number, 
/**
 * Rows that failed validation (derived here instead).
 */
rejected: number, 
/**
 * Why the run stopped asking the store, if it did.
 */
fault: string | null, };

export type OpenedDto = { 
/**
 * The index after the run.
 */
status: StatusDto, 
/**
 * Files (re)chunked in this run.
 */
files_changed: number, 
/**
 * Files unchanged since the last run.
 */
files_unchanged: number, 
/**
 * Whether embedding stopped early (lexical search is complete).
 */
embedding_incomplete: boolean, };

export type DiagnosticDto = { 
/**
 * Project-relative path.
 */
path: string, 
/**
 * Category (`too_large`, `binary`, ...).
 */
kind: string, 
/**
 * Detail.
 */
message: string, };

export type EncodingDto = "o200k_base" | "cl100k_base" | "qwen2" | "qwen3_5";

export type ModelDto = { 
/**
 * Model name (prefix-matched, case-insensitive).
 */
name: string, 
/**
 * Context window in tokens.
 */
context_window: number, 
/**
 * Default budget in tokens.
 */
default_budget: number, 
/**
 * The tokenizer sizes are counted with.
 */
encoding: EncodingDto, 
/**
 * Share of the budget kept free because `encoding` only approximates
 * the model's own tokenizer (0 for OpenAI models).
 */
safety_margin: number, 
/**
 * Whether `encoding` is the model's own tokenizer (counts are exact)
 * rather than a stand-in (counts are estimates, hence the margin).
 * Absent in rows saved before it existed: estimated.
 */
exact: boolean, };

export type BudgetUnit = "tokens" | "chars";

export type FormatDto = "xml" | "markdown" | "json";

export type PathWeightDto = { 
/**
 * Glob over project-relative paths.
 */
glob: string, 
/**
 * Multiplier in 0..=2.
 */
weight: number, };

export type TogglesDto = { 
/**
 * `@path:start-end` citations on each item.
 */
sources: boolean, 
/**
 * Each item's score.
 */
scores: boolean, 
/**
 * JSON whatever the format.
 */
structured: boolean, 
/**
 * The best items at both ends of the context ("lost in the middle").
 */
lost_in_middle: boolean, 
/**
 * A change under review shown as its new code, changed lines marked,
 * instead of as a unified diff. Absent in knobs saved before it
 * existed: off.
 */
diff_as_code: boolean, };

export type IntentDto = "docs" | "tests" | "code" | "default";

export type QuestionTypeDto = "implementation" | "architectural" | "debugging" | "code_explanation" | "feature_request" | "review";

export type KnobsDto = { 
/**
 * Model name.
 */
model: string, 
/**
 * The user's own model rows, checked before the built-in table.
 */
models: Array<ModelDto>, 
/**
 * Budget; `null` uses the model's default.
 */
budget: number | null, 
/**
 * Unit of `budget`.
 */
budget_unit: BudgetUnit, 
/**
 * Path weight rules; rows with an empty glob are ignored.
 */
path_weights: Array<PathWeightDto>, 
/**
 * Primer file names (any depth) or project-relative paths; their
 * chunks are always candidates and get `primer_boost`.
 */
primers: Array<string>, 
/**
 * Added to primer files' scores.
 */
primer_boost: number, 
/**
 * The leading files' other chunks are raised to this share of their
 * file's best score (0: off).
 */
sibling_share: number, 
/**
 * Automatic items kept at most; `null` keeps all.
 */
k: number | null, 
/**
 * Level of detail by score (off: full detail for all).
 */
lod: boolean, 
/**
 * Output format.
 */
format: FormatDto, 
/**
 * Recency boost of a file modified just now.
 */
recency_weight: number, 
/**
 * Files the re-ranker reads with the question (0: off). Preferences
 * saved before the knob existed take the default.
 */
read_files: number, 
/**
 * Days after which the recency boost halves (≤ 0: off).
 */
recency_half_life_days: number, 
/**
 * Automatic items scoring below this are dropped; `null`: none.
 */
min_score: number | null, 
/**
 * Tokens kept free in the context window for the answer.
 */
answer_reserve: number, 
/**
 * What the rendered prompt shows.
 */
toggles: TogglesDto, 
/**
 * NFKC, invisible-character stripping and injection redaction in retrieved text.
 */
sanitize: boolean, 
/**
 * Secret redaction everywhere.
 */
redact_secrets: boolean, 
/**
 * Overrides the detected intent; `null`: detected.
 */
intent: IntentDto | null, 
/**
 * Overrides the detected question type; `null`: detected.
 */
question_type: QuestionTypeDto | null, 
/**
 * The user's own instruction preamble per question type (a type
 * without one gets the built-in). Absent in knobs saved before it
 * existed: none.
 */
instructions: { [key in QuestionTypeDto]?: string }, };

export type ScoreDto = { 
/**
 * The score used for ordering (0..=1).
 */
score: number, 
/**
 * Relevance from BM25.
 */
lexical: number, 
/**
 * Relevance from vectors.
 */
vector: number, 
/**
 * Relevance from symbol names.
 */
symbol: number, 
/**
 * Relevance from the symbol graph.
 */
graph: number, 
/**
 * Relevance from question terms in the path.
 */
path_terms: number, 
/**
 * Relevance from the whole file's BM25 rank.
 */
file: number, 
/**
 * Relevance from past commits like the question that changed the file.
 */
history: number, 
/**
 * Relevance from the re-ranker, which read the question with the file.
 */
reader: number, 
/**
 * Primer boost.
 */
primer: number, 
/**
 * Recency boost.
 */
recency: number, 
/**
 * Added to the score because the chunk's file leads the ranking (its
 * best chunk's score × the sibling share); 0 otherwise.
 */
sibling: number, 
/**
 * Role × intent × path weight.
 */
multiplier: number, 
/**
 * The path weight alone.
 */
path_weight: number, 
/**
 * The glob that set the path weight.
 */
path_rule: string | null, 
/**
 * Pinned by the user.
 */
pinned: boolean, };

export type RowStatus = "included" | "degraded" | "dropped" | "hidden" | "banned";

export type TargetDto = { "kind": "folder", 
/**
 * Project-relative folder path, without a trailing `/`.
 */
path: string, } | { "kind": "file", 
/**
 * Project-relative path.
 */
path: string, } | { "kind": "chunk", 
/**
 * Project-relative path.
 */
path: string, 
/**
 * The symbol it defines.
 */
symbol: string | null, 
/**
 * First line when chosen.
 */
start_line: number, };

export type MarkDto = "pin" | "ban" | "clear";

export type MarkedDto = { 
/**
 * `pin` or `ban`.
 */
mark: MarkDto, 
/**
 * What was pinned or banned (the row's chunk or its whole file).
 */
target: TargetDto, };

export type SelectionDto = { 
/**
 * Pinned files and chunks.
 */
pinned: Array<TargetDto>, 
/**
 * Banned files and chunks.
 */
banned: Array<TargetDto>, };

export type RowDto = { 
/**
 * Chunk id (stable within an index generation).
 */
id: number, 
/**
 * 1-based rank by final score.
 */
rank: number, 
/**
 * Project-relative path.
 */
path: string, 
/**
 * First line.
 */
start_line: number, 
/**
 * Last line.
 */
end_line: number, 
/**
 * The symbol the chunk defines, if any.
 */
symbol: string | null, 
/**
 * The index's language name (`rust`, `python`, `tsx`, `markdown`,
 * `text`, …): what the UI highlights its code as.
 */
language: string, 
/**
 * Prompt section.
 */
section: string, 
/**
 * Final score and its factors.
 */
score: ScoreDto, 
/**
 * Level of detail rendered at (if included).
 */
lod: number | null, 
/**
 * Size in the budget's unit (0 if dropped).
 */
tokens: number, 
/**
 * Included, degraded, dropped or hidden.
 */
status: RowStatus, 
/**
 * Why it was degraded, dropped, hidden or banned.
 */
reason: string | null, 
/**
 * The user's pin or ban that applies to it, if any (an `@` mention in
 * the question pins too, but shows only in `score.pinned`).
 */
marked: MarkedDto | null, };

export type SectionDto = { 
/**
 * Section name (`instructions`, `retrieved_code`, ...).
 */
section: string, 
/**
 * Size in the budget's unit.
 */
size: number, };

export type ReportDto = { 
/**
 * The model row used.
 */
model: string, 
/**
 * `tokens` or `chars`.
 */
unit: string, 
/**
 * The budget asked for.
 */
budget: number, 
/**
 * What the prompt may use.
 */
usable: number, 
/**
 * Tokens kept free in the context window for the answer.
 */
answer_reserve: number, 
/**
 * What the prompt uses.
 */
used: number, 
/**
 * Something was degraded, dropped for budget, or trimmed.
 */
was_truncated: boolean, 
/**
 * Candidates not in the prompt.
 */
dropped_count: number, 
/**
 * Size the over-budget drops would need at their smallest.
 */
dropped_size: number, 
/**
 * Per-section sizes, each section measured alone.
 */
sections: Array<SectionDto>, 
/**
 * `used` less the sections' sum: the wrapping between pieces and the
 * tokens pieces share or save where they join (negative when the whole
 * prompt tokenizes into fewer tokens than its parts alone). With it
 * the sections add up to `used`.
 */
joins: number, 
/**
 * The assembly in one sentence: fits or truncated, items in (coarser),
 * items left out counted by reason.
 */
verdict: string, 
/**
 * The detected question type.
 */
question_type: string, 
/**
 * The detected intent.
 */
intent: string, 
/**
 * Matched categories, best first.
 */
categories: Array<string>, 
/**
 * Warnings to show.
 */
warnings: Array<string>, 
/**
 * Redactions and sanitizations applied.
 */
redactions: number, 
/**
 * What the search left out of the question (a pasted report's
 * template), in words; `null` when it searched the question whole.
 */
scaffolding: string | null, };

export type ChangeDto = { 
/**
 * `unstaged`, `staged` or `BASE..HEAD`.
 */
spec: string, 
/**
 * Files in the diff.
 */
files: number, 
/**
 * Hunks in the diff.
 */
hunks: number, 
/**
 * Lines added.
 */
added_lines: number, 
/**
 * Chunks pinned for their changed lines.
 */
pinned: number, };

export type AssemblyDto = { 
/**
 * One row per candidate, best score first.
 */
rows: Array<RowDto>, 
/**
 * Budget and truncation report.
 */
report: ReportDto, 
/**
 * The prompt exactly as it will be copied.
 */
prompt: string, 
/**
 * Files in the prompt that changed on disk since they were indexed
 * (the prompt shows the indexed text).
 */
stale: Array<string>, 
/**
 * For an agent's call re-opened: whether this prompt is byte for byte
 * the one the agent got; `null` otherwise.
 */
agent_match: boolean | null, 
/**
 * In change mode, the diff reviewed.
 */
change: ChangeDto | null, 
/**
 * The secondary LLM's search terms, or why there were none; `null`
 * when it is off.
 */
search_terms: string | null, };

export type ProjectSettingsDto = { 
/**
 * The knobs to use: built-in defaults, then `.loupe.toml`, then the user's changes.
 */
knobs: KnobsDto, 
/**
 * The team's defaults alone (what "reset" goes back to).
 */
team_knobs: KnobsDto, 
/**
 * Whether the project has a `.loupe.toml`.
 */
team_file: boolean, 
/**
 * What in `.loupe.toml` or the saved knobs was ignored, and why.
 */
warnings: Array<string>, 
/**
 * Pinned and banned chunks and files.
 */
selection: SelectionDto, };

export type PresetDto = { 
/**
 * Unique name.
 */
name: string, 
/**
 * The knobs it applies.
 */
knobs: KnobsDto, };

export type RecentDto = { 
/**
 * Canonical root (what to open).
 */
root: string, 
/**
 * Seconds since the Unix epoch.
 */
opened_at: number, };

export type ShownDto = { 
/**
 * Its status now.
 */
status: StatusDto, 
/**
 * The question the page asked it last (empty before any).
 */
question: string, 
/**
 * An index run of it is still in progress (its first, whose vectors
 * or whole index were arriving): the page follows it to the end.
 */
indexing: boolean, };

export type ChunkDetailDto = { 
/**
 * Chunk id.
 */
id: number, 
/**
 * Project-relative path.
 */
path: string, 
/**
 * First line.
 */
start_line: number, 
/**
 * Last line.
 */
end_line: number, 
/**
 * The symbol it defines.
 */
symbol: string | null, 
/**
 * The level of detail `rendered` is at.
 */
lod: number, 
/**
 * The chunk's text at that level, sanitized and redacted as in the prompt.
 */
rendered: string, 
/**
 * Redactions applied to `rendered`.
 */
redactions: number, 
/**
 * The whole file as it is on disk now; `null` when it cannot be read.
 */
source: string | null, 
/**
 * Why `source` is missing.
 */
source_error: string | null, 
/**
 * Whether the file changed since it was indexed.
 */
stale: boolean, };

export type CompletionDto = { 
/**
 * `file` or `symbol`.
 */
kind: string, 
/**
 * What to insert after `@`.
 */
value: string, };

export type WatchEventDto = { "kind": "changed", 
/**
 * How many paths changed.
 */
paths: number, } | { "kind": "indexed", 
/**
 * The catalog generation now.
 */
generation: number, 
/**
 * Files re-chunked.
 */
files_changed: number, 
/**
 * Files removed.
 */
files_deleted: number, } | { "kind": "failed", 
/**
 * What went wrong.
 */
message: string, } | { "kind": "history", 
/**
 * Commits in the history now.
 */
commits: number, };

export type AgentRequestDto = { 
/**
 * Unique id.
 */
id: string, 
/**
 * Milliseconds since the Unix epoch.
 */
time_ms: number, 
/**
 * `context`, `search` or `explain`.
 */
tool: string, 
/**
 * The MCP client's name and version, when it said.
 */
client: string | null, 
/**
 * The question as asked.
 */
question: string, 
/**
 * The change reviewed, if any.
 */
change: string | null, 
/**
 * `explain`'s file or symbol.
 */
target: string | null, 
/**
 * The model row used.
 */
model: string, 
/**
 * `tokens` or `chars`.
 */
unit: string, 
/**
 * The budget.
 */
budget: number, 
/**
 * What the prompt used.
 */
used: number, 
/**
 * Something was degraded, dropped for the budget or trimmed.
 */
truncated: boolean, 
/**
 * Items in the prompt.
 */
included: number, 
/**
 * Candidates not in the prompt.
 */
dropped: number, 
/**
 * Pins the call gave.
 */
pins: number, 
/**
 * Bans the call gave.
 */
bans: number, };

export type AgentRequestsDto = { 
/**
 * The log's version: pass it back to hear only about changes.
 */
version: string, 
/**
 * False when the caller's version is current (`requests` is then empty).
 */
changed: boolean, 
/**
 * The calls, newest first (at most the last 200).
 */
requests: Array<AgentRequestDto>, 
/**
 * Lines of the log that did not decode.
 */
skipped: number, 
/**
 * Whether knobs are saved for agents (they start from them).
 */
agent_knobs: boolean, };

export type AgentItemDto = { 
/**
 * `path:start-end`.
 */
at: string, 
/**
 * Final score.
 */
score: number, 
/**
 * Level of detail, if in the prompt.
 */
lod: number | null, 
/**
 * Size in the budget's unit.
 */
size: number, 
/**
 * What happened to it, in words.
 */
status: string, 
/**
 * Whether it was in the prompt.
 */
in_prompt: boolean, };

export type AgentRequestDetailDto = { 
/**
 * The call.
 */
request: AgentRequestDto, 
/**
 * The knobs it was assembled with.
 */
knobs: KnobsDto, 
/**
 * Its pins.
 */
pinned: Array<TargetDto>, 
/**
 * Its bans.
 */
banned: Array<TargetDto>, 
/**
 * The first items the agent got, best first.
 */
items: Array<AgentItemDto>, 
/**
 * Candidates in all.
 */
items_total: number, };

export type MapViewDto = { 
/**
 * The folder (or file) shown, project-relative; `""` for the project.
 */
under: string, 
/**
 * Levels of children sent (1–4).
 */
depth: number, 
/**
 * Children sent per folder, the largest (1–500); the rest are folded.
 */
per_folder: number, };

export type GoldenItemDto = { 
/**
 * `file` or `symbol`.
 */
kind: string, 
/**
 * The path or the name.
 */
name: string, 
/**
 * In the prompt.
 */
found: boolean, 
/**
 * What happened, in words ("rank 2, LOD 0", "dropped: ranked below
 * the k cut (rank 14)", "not retrieved", "no file or symbol by that
 * name").
 */
outcome: string, 
/**
 * Rank of its best chunk, when it was retrieved.
 */
rank: number | null, 
/**
 * Level of detail in the prompt, when found.
 */
lod: number | null, };

export type GoldenQuestionDto = { 
/**
 * Its line in the golden file.
 */
line: number, 
/**
 * The question.
 */
ask: string, 
/**
 * What the prompt used of its budget.
 */
used: number, 
/**
 * The budget.
 */
budget: number, 
/**
 * `tokens` or `chars`.
 */
unit: string, 
/**
 * Every expected item is in the prompt.
 */
passed: boolean, 
/**
 * Each expected item.
 */
items: Array<GoldenItemDto>, 
/**
 * Why it could not be assembled, if it could not.
 */
error: string | null, };

export type GoldenRunDto = { 
/**
 * The golden file, project-relative.
 */
file: string, 
/**
 * Whether the project has one (else nothing was run).
 */
present: boolean, 
/**
 * Expected items in their prompts, over all questions.
 */
found: number, 
/**
 * Expected items, over all questions.
 */
expected: number, 
/**
 * One per question, in file order.
 */
questions: Array<GoldenQuestionDto>, };

export type MapStatusDto = "included" | "degraded" | "dropped" | "hidden" | "banned" | "not_retrieved";

export type MapCountsDto = { 
/**
 * In the prompt at their default detail.
 */
included: number, 
/**
 * In the prompt, coarser.
 */
degraded: number, 
/**
 * Retrieved, not in the prompt.
 */
dropped: number, 
/**
 * Hidden by a path weight.
 */
hidden: number, 
/**
 * Banned by the user.
 */
banned: number, 
/**
 * Not retrieved.
 */
not_retrieved: number, };

export type MapNodeDto = { 
/**
 * The last path component (the project's folder name at the root).
 */
name: string, 
/**
 * Project-relative path, `/`-separated; empty at the root.
 */
path: string, 
/**
 * A file (else a folder).
 */
file: boolean, 
/**
 * Indexed tokens under it (o200k_base, what it would cost in full).
 */
tokens: number, 
/**
 * Indexed files under it.
 */
files: number, 
/**
 * A file's status for the current question (`null` with no question).
 */
status: MapStatusDto | null, 
/**
 * Why a file is out or coarser, in words ("dropped: beyond k",
 * "hidden by the path weight \"tests/**\" = 0", "degraded (LOD 2)").
 */
why: string | null, 
/**
 * Files per status under a folder (`null` with no question).
 */
counts: MapCountsDto | null, 
/**
 * Folders and files in it, most tokens first; empty below the depth
 * asked for.
 */
children: Array<MapNodeDto>, 
/**
 * Children not sent (past the depth, or past the per-folder cap).
 */
folded: number, 
/**
 * Their tokens.
 */
folded_tokens: number, };

export type ExpanderDto = { 
/**
 * Base URL of an OpenAI-compatible API (`/chat/completions` is appended).
 */
base_url: string, 
/**
 * The chat model.
 */
model: string, 
/**
 * Whether an API key is stored.
 */
has_key: boolean, 
/**
 * How long a question may wait for its terms, in milliseconds.
 */
timeout_ms: number, };

export type ExpanderInputDto = { 
/**
 * Base URL (`http://` or `https://`).
 */
base_url: string, 
/**
 * The chat model.
 */
model: string, 
/**
 * A new API key; `null` keeps the stored one, `""` removes it.
 */
api_key: string | null, 
/**
 * Milliseconds, 100 to 60,000.
 */
timeout_ms: number, };

/** Each knob's range, from the core's `knobs::limits`. */
export const KNOB_LIMITS = {
  path_weight: { min: 0, max: 2 },
  primer_boost: { min: 0, max: 1 },
  sibling_share: { min: 0, max: 1 },
  recency_weight: { min: 0, max: 0.5 },
  recency_half_life_days: { min: 0, max: 3650 },
  min_score: { min: 0, max: 1 },
  diversity: { min: 0, max: 1 },
  safety_margin: { min: 0, max: 0.9 },
  min_budget: 100,
  max_k: 10000,
  max_read_files: 50,
} as const;
