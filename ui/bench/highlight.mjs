// Highlighting benchmark (BENCHMARKS.md, not part of `make test`): the mock
// build's `…/big` project (400 Rust chunks), a budget of 60,000 tokens, so
// the prompt is 200 documents, ~230k characters (~50k tokens of code). Measured in Debian's chromium: the time from
// the question to the prompt shown as plain text, to the prompt fully
// coloured, and the longest task the page ran meanwhile (what a user would
// feel as a freeze). Medians of RUNS fresh pages.
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';

const PORT = 4183;
const RUNS = Number(process.env.RUNS ?? 5);
const server = spawn('node_modules/.bin/vite', ['preview', '--mode', 'mock', '--outDir', 'dist-mock', '--host', '127.0.0.1', '--port', String(PORT), '--strictPort'], { stdio: 'ignore' });
try {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${PORT}/`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const runs = [];
  for (let run = 0; run < RUNS; run++) {
    const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await p.goto(`http://127.0.0.1:${PORT}/`);
    await p.getByTestId('path-input').fill('/mock/big');
    await p.getByTestId('open-button').click();
    await p.getByTestId('status').waitFor();
    await p.getByTestId('budget-input').fill('60000');
    await p.getByTestId('budget-input').press('Enter');
    await p.evaluate(() => {
      window.__bench = { longest: 0, after: 0, start: 0, plain: 0, done: 0 };
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          window.__bench.longest = Math.max(window.__bench.longest, e.duration);
          // Tasks that started once the plain text was up: the colouring's own.
          if (window.__bench.plain && e.startTime >= window.__bench.plain) window.__bench.after = Math.max(window.__bench.after, e.duration);
        }
      }).observe({ type: 'longtask', buffered: false });
      const pre = () => document.querySelector('[data-testid="prompt-preview"]');
      new MutationObserver(() => {
        const el = pre();
        if (!el || !window.__bench.start) return;
        if (!window.__bench.plain && (el.textContent ?? '').length > 150_000) window.__bench.plain = performance.now();
        if (!window.__bench.done && el.getAttribute('data-highlighted') === 'true' && (el.textContent ?? '').length > 150_000) window.__bench.done = performance.now();
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    await p.getByTestId('question-input').fill('how are requests handled?');
    await p.evaluate(() => (window.__bench.start = performance.now()));
    await p.getByTestId('question-input').press('Enter');
    await p.waitForFunction(() => window.__bench.done > 0, null, { timeout: 60_000 });
    const b = await p.evaluate(() => ({ ...window.__bench, chars: document.querySelector('[data-testid="prompt-preview"]').textContent.length }));
    runs.push({ plain: b.plain - b.start, done: b.done - b.start, longest: b.longest, after: b.after, chars: b.chars });
    await p.close();
  }
  await browser.close();
  const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  console.log(`prompt: ${runs[0].chars} chars (~${Math.round(runs[0].chars / 4.5)} tokens at 4.5 characters a token), ${RUNS} runs, medians:`);
  console.log(`  question → plain text shown: ${median('plain').toFixed(0)} ms`);
  console.log(`  question → fully highlighted: ${median('done').toFixed(0)} ms`);
  console.log(`  longest task meanwhile: ${median('longest').toFixed(0)} ms`);
  console.log(`  longest task once the plain text was up (the colouring's): ${median('after').toFixed(0)} ms`);
} finally {
  server.kill();
}
