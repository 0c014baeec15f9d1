import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// `vite build` makes the app's frontend (ui/dist, loaded by Tauri);
// `vite build --mode mock` swaps in the mock backend for the Playwright tests.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  preview: { port: 4173, strictPort: true },
  build: { target: 'es2022', sourcemap: false },
});
