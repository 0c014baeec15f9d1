// The real backend: Tauri commands (src-tauri/src/commands.rs) and plugins.

import { Channel, invoke } from '@tauri-apps/api/core';
import { getCurrentWebview } from '@tauri-apps/api/webview';
import { open } from '@tauri-apps/plugin-dialog';
import { writeText } from '@tauri-apps/plugin-clipboard-manager';
import { BackendError, type Backend, type IndexEvent, type WatchEventDto } from './types';

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw BackendError.from(e);
  }
}

export const tauriBackend: Backend = {
  openProject(path, onProgress) {
    const channel = new Channel<IndexEvent>();
    channel.onmessage = onProgress;
    return call('open_project', { path, onProgress: channel });
  },
  openIndexed: (path) => call('open_indexed', { path }),
  openScanning: (path) => call('open_scanning', { path }),
  cancelIndex: (root) => call('cancel_index', { root }),
  cancelQuestion: (root, question) => call('cancel_question', { root, question }),
  projectStatus: (root) => call('project_status', { root }),
  diagnostics: (root) => call('diagnostics', { root }),
  models: () => call('models'),
  builtinInstructions: () => call('builtin_instructions'),
  defaultKnobs: () => call('default_knobs'),
  assemble: (root, question, knobs, agentRequest, change, skipReading) =>
    call('assemble', { root, question, knobs, agentRequest: agentRequest ?? null, change: change ?? null, skipReading: skipReading ?? false }),
  goldenRun: (root, knobs) => call('golden_run', { root, knobs }),
  tokenMap: (root, question, knobs, agentRequest, change, view) =>
    call('token_map', { root, question, knobs, agentRequest, change, view }),
  agentRequests: (root, known) => call('agent_requests', { root, known }),
  agentRequest: (root, id) => call('agent_request', { root, id }),
  saveAgentKnobs: (root, knobs) => call('save_agent_knobs', { root, knobs }),
  projectSettings: (root) => call('project_settings', { root }),
  saveKnobs: (root, knobs) => call('save_knobs', { root, knobs }),
  mark: (root, target, mark) => call('mark', { root, target, mark }),
  presets: () => call('presets'),
  savePreset: (name, knobs) => call('save_preset', { name, knobs }),
  expanderSettings: () => call('expander_settings'),
  saveExpanderSettings: (settings) => call('save_expander_settings', { settings }),
  deletePreset: (name) => call('delete_preset', { name }),
  recentProjects: () => call('recent_projects'),
  shownProject: () => call('shown_project'),
  forgetRecent: (root) => call('forget_recent', { root }),
  chunkDetail: (root, id, lod, knobs) => call('chunk_detail', { root, id, lod, knobs }),
  complete: (root, typed, limit) => call('complete', { root, typed, limit }),
  watchProject(root, onEvent) {
    const channel = new Channel<WatchEventDto>();
    channel.onmessage = onEvent;
    return call('watch_project', { root, onEvent: channel });
  },
  unwatchProject: (root) => call('unwatch_project', { root }),
  // The dialog opens from Rust: the webview never names a path to write.
  savePrompt: (text, fileName) => call('save_prompt', { text, fileName }),
  async pickFolder() {
    const picked = await open({ directory: true, multiple: false, title: 'Open a project' });
    return typeof picked === 'string' ? picked : null;
  },
  async copy(text) {
    try {
      await writeText(text);
    } catch (e) {
      throw BackendError.from(e);
    }
  },
  async onFolderDrop(handler) {
    return getCurrentWebview().onDragDropEvent((event) => {
      if (event.payload.type === 'drop') {
        const first = event.payload.paths[0];
        if (first) handler(first);
      }
    });
  },
};
