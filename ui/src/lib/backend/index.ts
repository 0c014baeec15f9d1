// Picks the backend: the mock in `vite build --mode mock` (Playwright tests),
// Tauri otherwise. `import.meta.env.MODE` is replaced at build time, so the
// production bundle contains no mock code.

import type { Backend } from './types';
import { tauriBackend } from './tauri';

export * from './types';

export async function loadBackend(): Promise<Backend> {
  if (import.meta.env.MODE === 'mock') {
    const { mockBackend } = await import('./mock');
    return mockBackend;
  }
  return tauriBackend;
}
