// The one typed door from the UI to Rust. Components import `backend` from
// `./index` and never call `invoke` themselves.

import type {
  AgentRequestDetailDto,
  AgentRequestsDto,
  AssemblyDto,
  ChunkDetailDto,
  CompletionDto,
  DiagnosticDto,
  ErrorCode,
  ErrorDto,
  ExpanderDto,
  ExpanderInputDto,
  GoldenRunDto,
  IndexEvent,
  KnobsDto,
  MapNodeDto,
  MapViewDto,
  MarkDto,
  ModelDto,
  OpenedDto,
  PresetDto,
  ProjectSettingsDto,
  QuestionTypeDto,
  RecentDto,
  ShownDto,
  SelectionDto,
  StatusDto,
  TargetDto,
  WatchEventDto,
} from '../generated/dto';

export type * from '../generated/dto';
export { KNOB_LIMITS } from '../generated/dto';

/** An error from the backend; the UI branches on `code`, never on `message`. */
export class BackendError extends Error implements ErrorDto {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  /** Normalise whatever a rejected call produced. */
  static from(e: unknown): BackendError {
    if (e instanceof BackendError) return e;
    if (e && typeof e === 'object' && 'code' in e && 'message' in e) {
      const { code, message } = e as ErrorDto;
      return new BackendError(code, String(message));
    }
    return new BackendError('engine', String(e));
  }
}

export type Unsubscribe = () => void;

/** Everything the UI asks of the app. */
export interface Backend {
  /** Open (and incrementally index) a folder; progress arrives through `onProgress`. */
  openProject(path: string, onProgress: (e: IndexEvent) => void): Promise<OpenedDto>;
  /** Open an indexed project without indexing (`null`: never indexed). */
  openIndexed(path: string): Promise<StatusDto | null>;
  /** A project whose first index is running, to show before it lands
   * (generation 0): its questions are answered from a scan of the files. */
  openScanning(path: string): Promise<StatusDto>;
  /** Stop the running index job of `root`. */
  cancelIndex(root: string): Promise<boolean>;
  /** Stop the answer to `question` in `root` if it is the one asked last
   * (it then fails with `cancelled`); `false` otherwise. */
  cancelQuestion(root: string, question: string): Promise<boolean>;
  projectStatus(root: string): Promise<StatusDto>;
  diagnostics(root: string): Promise<DiagnosticDto[]>;
  models(): Promise<ModelDto[]>;
  /** The built-in instruction preamble of each question type. */
  builtinInstructions(): Promise<Partial<Record<QuestionTypeDto, string>>>;
  defaultKnobs(): Promise<KnobsDto>;
  /** Assemble `question`; with `change` (`unstaged`, `staged`, `BASE..HEAD`)
   * as a review of that diff (the question may then be empty); with
   * `agentRequest`, as that agent call was (its pins, bans and change),
   * saying whether the prompt is the one the agent got; with
   * `skipReading`, without the re-ranker's reading (today's ranking, at
   * once). */
  assemble(root: string, question: string, knobs: KnobsDto, agentRequest?: string | null, change?: string | null, skipReading?: boolean): Promise<AssemblyDto>;
  /** The project's golden questions run under `knobs` (`present: false` without a golden file). */
  goldenRun(root: string, knobs: KnobsDto): Promise<GoldenRunDto>;
  /** The token map under `view.under`, marked by the assembly `assemble` gives for the same arguments (unmarked with nothing to ask). */
  tokenMap(
    root: string,
    question: string,
    knobs: KnobsDto,
    agentRequest: string | null,
    change: string | null,
    view: MapViewDto,
  ): Promise<MapNodeDto>;
  /** The agents' calls on the project (`loupe mcp`), newest first; nothing is re-sent while `known` is the current version. */
  agentRequests(root: string, known: string | null): Promise<AgentRequestsDto>;
  /** One agent call, to re-open in the inspector. */
  agentRequest(root: string, id: string): Promise<AgentRequestDetailDto>;
  /** Save `knobs` as what agents' calls start from (`null` forgets them). */
  saveAgentKnobs(root: string, knobs: KnobsDto | null): Promise<void>;
  /** Knobs (defaults ← `.loupe.toml` ← saved changes), pins and bans of an open project. */
  projectSettings(root: string): Promise<ProjectSettingsDto>;
  /** Remember the project's knobs (stored as differences from the team's defaults). */
  saveKnobs(root: string, knobs: KnobsDto): Promise<void>;
  /** Pin, ban or clear a chunk or file; returns every pin and ban. */
  mark(root: string, target: TargetDto, mark: MarkDto): Promise<SelectionDto>;
  /** The secondary LLM's settings; `null`: off. */
  expanderSettings(): Promise<ExpanderDto | null>;
  /** Store them (`null`: turn it off); returns what is stored. */
  saveExpanderSettings(settings: ExpanderInputDto | null): Promise<ExpanderDto | null>;
  presets(): Promise<PresetDto[]>;
  savePreset(name: string, knobs: KnobsDto): Promise<PresetDto[]>;
  deletePreset(name: string): Promise<PresetDto[]>;
  recentProjects(): Promise<RecentDto[]>;
  /** The project the page showed and its last question, kept by the engine
   * past a page whose process died; `null` in a fresh app. */
  shownProject(): Promise<ShownDto | null>;
  forgetRecent(root: string): Promise<RecentDto[]>;
  /** A chunk as the prompt shows it at `lod`, and its whole file now. */
  chunkDetail(root: string, id: number, lod: number, knobs: KnobsDto): Promise<ChunkDetailDto>;
  /** Files and symbols completing an `@` mention. */
  complete(root: string, typed: string, limit: number): Promise<CompletionDto[]>;
  /** Keep the project's index fresh; `onEvent` hears about changes. */
  watchProject(root: string, onEvent: (e: WatchEventDto) => void): Promise<void>;
  unwatchProject(root: string): Promise<boolean>;
  /** Ask the user where to save `text` (suggesting `fileName`) and write it
   * there; the path, or `null` when they cancel. */
  savePrompt(text: string, fileName: string): Promise<string | null>;
  /** Ask the user for a folder; `null` when they cancel. */
  pickFolder(): Promise<string | null>;
  /** Put `text` on the system clipboard. */
  copy(text: string): Promise<void>;
  /** Call `handler` with the folder dropped on the window. */
  onFolderDrop(handler: (path: string) => void): Promise<Unsubscribe>;
}
