// The one typed door from the UI to Rust. Components import `backend` from
// `./index` and never call `invoke` themselves.

import type {
  AssemblyDto,
  DiagnosticDto,
  ErrorCode,
  ErrorDto,
  IndexEvent,
  KnobsDto,
  ModelDto,
  OpenedDto,
  StatusDto,
} from '../generated/dto';

export type * from '../generated/dto';

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
  /** Stop the running index job of `root`. */
  cancelIndex(root: string): Promise<boolean>;
  projectStatus(root: string): Promise<StatusDto>;
  diagnostics(root: string): Promise<DiagnosticDto[]>;
  models(): Promise<ModelDto[]>;
  defaultKnobs(): Promise<KnobsDto>;
  assemble(root: string, question: string, knobs: KnobsDto): Promise<AssemblyDto>;
  /** Ask the user for a folder; `null` when they cancel. */
  pickFolder(): Promise<string | null>;
  /** Put `text` on the system clipboard. */
  copy(text: string): Promise<void>;
  /** Call `handler` with the folder dropped on the window. */
  onFolderDrop(handler: (path: string) => void): Promise<Unsubscribe>;
}
