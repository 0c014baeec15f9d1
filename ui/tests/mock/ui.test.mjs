// Mocked UI: the real Svelte app built with `vite build --mode mock` (the
// mock backend in src/lib/backend/mock.ts), served by `vite preview` and
// driven by Playwright on Debian's chromium. Selectors are data-testids.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';

const PORT = 4173;
const URL = `http://127.0.0.1:${PORT}/`;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// The flags that keep Debian's chromium quiet and offline (TAURI-NOTES.md).
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** @type {import('node:child_process').ChildProcess} */
let server;
/** @type {import('playwright-core').Browser} */
let browser;

async function waitForServer() {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(URL);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`vite preview did not answer on ${URL}`);
}

before(async () => {
  server = spawn(
    'node_modules/.bin/vite',
    ['preview', '--mode', 'mock', '--outDir', 'dist-mock', '--host', '127.0.0.1', '--port', String(PORT), '--strictPort'],
    { stdio: 'ignore' },
  );
  await waitForServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

after(async () => {
  await browser?.close();
  server?.kill();
});

/** A fresh page at 1280×800 with `path` opened (unless null). */
async function page(path = '/mock/small') {
  const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await p.goto(URL);
  if (path !== null) {
    await p.getByTestId('path-input').fill(path);
    await p.getByTestId('open-button').click();
    await p.getByTestId('status').waitFor();
  }
  return p;
}

/** Type a question and submit it. */
async function type(p, question) {
  await p.getByTestId('question-input').fill(question);
  await p.getByTestId('question-input').press('Enter');
}

/** Ask a question and wait for the table. */
async function ask(p, question = 'how does packing work?') {
  await type(p, question);
  await p.getByTestId('chunk-table').waitFor();
}

const assembleCalls = (p) =>
  p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble'));

test('the empty state invites opening a project', async () => {
  const p = await page(null);
  await p.getByTestId('empty-state').waitFor();
  assert.match(await p.getByTestId('empty-state').innerText(), /Open a project/);
  assert.equal(await p.getByTestId('chunk-table').count(), 0);
  await p.close();
});

test('a backend error is shown with its code', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/missing-folder');
  await p.getByTestId('open-button').click();
  const banner = p.getByTestId('error-banner');
  await banner.waitFor();
  assert.equal(await banner.getAttribute('data-code'), 'bad_project');
  assert.equal(await p.getByTestId('error-code').innerText(), 'bad_project');
  // Still on the empty state: nothing was opened.
  await p.getByTestId('empty-state').waitFor();
  await p.close();
});

test('an assemble error is shown by code and the next good answer clears it', async () => {
  const p = await page();
  await type(p, 'please fail');
  await p.getByTestId('error-banner').waitFor();
  assert.equal(await p.getByTestId('error-banner').getAttribute('data-code'), 'bad_request');
  await ask(p, 'how does packing work?');
  await p.getByTestId('chunk-row').first().waitFor();
  await p.getByTestId('error-banner').waitFor({ state: 'detached' });
  await p.close();
});

test('indexing shows progress, then the status', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/small');
  await p.getByTestId('open-button').click();
  await p.getByTestId('progress').waitFor();
  await p.getByTestId('status').waitFor();
  assert.match(await p.getByTestId('status-files').innerText(), /12 files/);
  await p.getByTestId('diagnostics-button').click();
  assert.match(await p.getByTestId('diagnostics-list').innerText(), /binary/);
  await p.close();
});

test('indexing progress is live and Cancel stops it', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/slow');
  await p.getByTestId('open-button').click();
  const bar = p.getByTestId('progress-bar');
  await bar.waitFor();
  await p.waitForFunction(
    () => Number(document.querySelector('[data-testid="progress-bar"]')?.getAttribute('aria-valuenow')) >= 10,
  );
  const first = Number(await bar.getAttribute('aria-valuenow'));
  await p.waitForFunction(
    (n) => Number(document.querySelector('[data-testid="progress-bar"]')?.getAttribute('aria-valuenow')) > n,
    first,
  );
  assert.match(await p.getByTestId('progress-label').innerText(), /Parsing/);
  await p.getByTestId('cancel-button').click();
  await p.getByTestId('progress').waitFor({ state: 'detached' });
  assert.equal(await p.getByTestId('error-banner').getAttribute('data-code'), 'cancelled');
  await p.getByTestId('empty-state').waitFor();
  await p.close();
});

test('Ctrl+K focuses the question box', async () => {
  const p = await page();
  await p.getByTestId('path-input').focus();
  await p.keyboard.press('Control+k');
  assert.equal(await p.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'question-input');
  await p.close();
});

test('2,000 rows are virtualized and the table stays responsive', async () => {
  const p = await page('/mock/many');
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  assert.equal(await p.getByTestId('row-count').innerText(), '2000');
  const rendered = await p.getByTestId('chunk-row').count();
  assert.ok(rendered < 100, `rendered ${rendered} rows of 2000`);

  // Scroll to the end: the last rank is rendered, still only a window of rows.
  const started = Date.now();
  await p.getByTestId('chunk-body').evaluate((el) => (el.scrollTop = el.scrollHeight));
  await p.locator('[data-testid="chunk-row"][data-rank="2000"]').waitFor();
  assert.ok((await p.getByTestId('chunk-row').count()) < 100);

  // A knob change re-renders the whole result; the page answers promptly.
  const before = Number(await p.getByTestId('assemble-count').innerText());
  await p.getByTestId('primer-boost').fill('0.5');
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid="assemble-count"]')?.textContent) > n, before);
  const elapsed = Date.now() - started;
  // Generous: this guards against an unvirtualized table (seconds), not a benchmark.
  assert.ok(elapsed < 5000, `scroll + re-assemble took ${elapsed} ms`);
  await p.close();
});

test('a very long path is cut with an ellipsis, not widening the page', async () => {
  const p = await page('/mock/long');
  await ask(p);
  const row = p.locator('[data-testid="chunk-row"][data-rank="1"]');
  await row.waitFor();
  const path = await row.getAttribute('data-path');
  assert.ok(path && path.length > 500, 'the fixture path is long');
  const cell = row.locator('.path');
  assert.equal(await cell.getAttribute('title'), `${path}:1-9`);
  const fits = await p.evaluate(() => ({
    page: document.documentElement.scrollWidth <= window.innerWidth,
    table: (() => {
      const t = document.querySelector('[data-testid="chunk-body"]');
      return t ? t.scrollWidth <= t.clientWidth + 1 : false;
    })(),
  }));
  assert.deepEqual(fits, { page: true, table: true });
  await p.close();
});

test('changing a path weight re-assembles; weight 0 hides the rows', async () => {
  const p = await page();
  await ask(p);
  await p.locator('[data-testid="chunk-row"][data-path="tests/pack_test.rs"]').waitFor();
  const callsBefore = (await assembleCalls(p)).length;

  await p.getByTestId('weight-add').click();
  await p.getByTestId('weight-glob-0').fill('tests/**');
  await p.getByTestId('weight-value-0').fill('0');
  await p.locator('[data-testid="chunk-row"][data-path="tests/pack_test.rs"]').waitFor({ state: 'detached' });

  const calls = await assembleCalls(p);
  assert.ok(calls.length > callsBefore, 'assemble was called again');
  const lastKnobs = calls[calls.length - 1].args.knobs;
  assert.deepEqual(lastKnobs.path_weights, [{ glob: 'tests/**', weight: 0 }]);
  assert.doesNotMatch(await p.getByTestId('prompt-preview').innerText(), /tests\/pack_test\.rs/);

  // The hidden rows can be shown again, marked as hidden.
  await p.getByTestId('show-hidden').check();
  const hidden = p.locator('[data-testid="chunk-row"][data-path="tests/pack_test.rs"]');
  assert.equal(await hidden.getAttribute('data-status'), 'hidden');
  await p.close();
});

test('a lower budget drops more and reports truncation; copy confirms', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('report').waitFor();
  assert.equal(await p.getByTestId('truncation').getAttribute('data-truncated'), 'false');
  await p.getByTestId('budget-input').fill('900');
  await p.getByTestId('budget-input').press('Enter');
  await p.locator('[data-testid="truncation"][data-truncated="true"]').waitFor();
  assert.ok(Number(await p.getByTestId('dropped-count').innerText()) > 0);

  await p.getByTestId('copy-button').click();
  await p.getByTestId('copy-confirm').waitFor();
  const copied = await p.evaluate(() => window.__loupeMock.copied);
  assert.equal(copied.length, 1);
  assert.equal(copied[0], await p.getByTestId('prompt-preview').innerText());
  await p.close();
});
