// Mocked UI: the real Svelte app built with `vite build --mode mock` (the
// mock backend in src/lib/backend/mock.ts), served by `vite preview` and
// driven by Playwright on Debian's chromium. Selectors are data-testids.
//
// The mock serves the real app's answers (src/lib/backend/canned.json) to
// the requests listed in requests.json. With LOUPE_RECORD_MOCK=1 the run
// adds every request it made to that list (`make ui-record`, which then
// has the real app answer them); without it, a request with no canned
// answer is named at the end of the run.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
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

/** Requests looked up in the canned answers, by key; and those not found. */
const asked = new Map();
const missed = new Map();
const REQUESTS = new globalThis.URL('./requests.json', import.meta.url);
/** The real app's answers the mock serves (built-in texts, models, ...). */
const CANNED = JSON.parse(readFileSync(new globalThis.URL('../../src/lib/backend/canned.json', import.meta.url), 'utf8'));

after(async () => {
  await browser?.close();
  server?.kill();
  if (process.env.LOUPE_RECORD_MOCK) {
    // `prune` (ui-record's last pass): only what this run asked, so a
    // request no test makes any more leaves the canned answers.
    const kept = process.env.LOUPE_RECORD_MOCK === 'prune' ? [] : JSON.parse(readFileSync(REQUESTS, 'utf8'));
    const all = new Map(kept.map((r) => [JSON.stringify(r), r]));
    for (const [key, r] of asked) all.set(key, r);
    const keys = [...new Set([...all.values()].map((r) => JSON.stringify(r)))].sort();
    writeFileSync(REQUESTS, `[\n${keys.join(',\n')}\n]\n`);
    console.error(`recorded ${keys.length} requests (${missed.size} had no canned answer yet)`);
  } else if (missed.size > 0) {
    console.error(`the mock had no canned answer for ${missed.size} requests: run \`make ui-record\`:`);
    for (const key of missed.keys()) console.error(`  ${key}`);
  }
});

/** A fresh page at 1280×800 with `path` opened (unless null). */
async function page(path = '/mock/small') {
  const p = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await p.exposeBinding('__loupeAsked', (_source, request, key, found) => {
    asked.set(key, request);
    if (!found) missed.set(key, request);
  });
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

test('an answer still on its way is not drawn once its question is cleared and another project opened', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  await p.evaluate(() => window.__loupeMock.holdAssemble());
  const before = (await assembleCalls(p)).length;
  await type(p, 'where are the tests?');
  await p.waitForFunction((n) => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').length > n, before);
  await type(p, '');
  await p.getByTestId('path-input').fill('/mock/long');
  await p.getByTestId('open-button').click();
  await p.waitForFunction(() => document.querySelector('[data-testid="status-root"]')?.textContent === '/mock/long');
  await p.evaluate(() => window.__loupeMock.releaseAssemble());
  // The held answer is computed as soon as it is released; let the page
  // run what it would do with it.
  await p.evaluate(() => new Promise((r) => setTimeout(r, 300)));
  assert.equal(await p.getByTestId('chunk-row').count(), 0);
  assert.equal(await p.getByTestId('error-banner').count(), 0);
  await p.getByTestId('ask-hint').waitFor();
  await p.close();
});

test('a question cleared in the box, then another project opened at once, is not asked there', async () => {
  // /mock/long opened before, so it reopens at once: well within the
  // question box's debounce.
  const p = await page('/mock/long');
  await p.getByTestId('path-input').fill('/mock/small');
  await p.getByTestId('open-button').click();
  await p.waitForFunction(() => document.querySelector('[data-testid="status-root"]')?.textContent === '/mock/small');
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  // Cleared by typing (debounced, no Enter), and the switch comes before
  // the debounce lets the empty question through.
  await p.getByTestId('question-input').fill('');
  await p.getByTestId('path-input').fill('/mock/long');
  await p.getByTestId('open-button').click();
  await p.waitForFunction(() => document.querySelector('[data-testid="status-root"]')?.textContent === '/mock/long');
  await p.evaluate(() => new Promise((r) => setTimeout(r, 600)));
  const askedThere = (await assembleCalls(p)).filter((c) => c.args.root === '/mock/long');
  assert.deepEqual(askedThere, []);
  assert.equal(await p.getByTestId('chunk-row').count(), 0);
  await p.getByTestId('ask-hint').waitFor();
  await p.close();
});

test('clearing the question clears the answer drawn for it', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  await p.getByTestId('question-input').fill('');
  await p.getByTestId('chunk-row').first().waitFor({ state: 'detached' });
  await p.getByTestId('ask-hint').waitFor();
  await p.close();
});

test("a pasted report's template is not searched, and the report says so", async () => {
  const p = await page();
  await ask(p, 'Packing drops items\n## Bug Report\n<!-- Please fill in the template. -->\n### Description\nItems over the budget vanish.');
  await p.getByTestId('chunk-row').first().waitFor();
  assert.equal(
    await p.getByTestId('scaffolding').innerText(),
    'searched without 3 lines of a report template (HTML comments, headings that name no code)',
  );
  // The prompt keeps the question as typed.
  assert.ok((await p.getByTestId('prompt-preview').textContent()).includes('## Bug Report'));
  await ask(p, 'how does packing work?');
  await p.getByTestId('scaffolding').waitFor({ state: 'detached' });
  await p.close();
});

test('a question replaced while its answer is on its way is stopped, and the new one asked at once', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  await p.evaluate(() => window.__loupeMock.holdAssemble());
  const calls = () => p.evaluate(() => window.__loupeMock.calls.map((c) => ({ cmd: c.cmd, question: c.args?.question })));
  await type(p, 'where are the tests?');
  await p.waitForFunction(() =>
    window.__loupeMock.calls.some((c) => c.cmd === 'assemble' && c.args.question === 'where are the tests?'),
  );
  assert.equal((await calls()).filter((c) => c.cmd === 'cancel_question').length, 0);
  // Another question: the held answer is stopped, and the new question is
  // asked while the engine still holds every answer back (without the stop,
  // it would wait for the held one).
  await type(p, 'is the budget respected?');
  await p.waitForFunction(() =>
    window.__loupeMock.calls.some((c) => c.cmd === 'assemble' && c.args.question === 'is the budget respected?'),
  );
  const stopped = (await calls()).filter((c) => c.cmd === 'cancel_question');
  assert.deepEqual(stopped, [{ cmd: 'cancel_question', question: 'where are the tests?' }]);
  // The stopped answer is not an error the user sees.
  assert.equal(await p.getByTestId('error-banner').count(), 0);
  await p.evaluate(() => window.__loupeMock.releaseAssemble());
  await p.waitForFunction(() => {
    const asked = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble');
    return asked[asked.length - 1]?.args.question === 'is the budget respected?';
  });
  await p.getByTestId('chunk-row').first().waitFor();
  assert.equal(await p.getByTestId('error-banner').count(), 0);
  await p.close();
});

test('the token map asking an old question is stopped when another is asked', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  // The table has its answer; the map's ask of the same question is held.
  await p.evaluate(() => window.__loupeMock.holdAssemble());
  await p.getByTestId('view-map').click();
  await p.waitForFunction(() =>
    window.__loupeMock.calls.some((c) => c.cmd === 'token_map' && c.args.question === 'how does packing work?'),
  );
  await type(p, 'where are the tests?');
  // The map's held ask is stopped at once (without the stop, the engine
  // would answer the old one first).
  await p.waitForFunction(() => window.__loupeMock.calls.some((c) => c.cmd === 'cancel_question'));
  const stopped = await p.evaluate(() =>
    window.__loupeMock.calls.filter((c) => c.cmd === 'cancel_question').map((c) => c.args.question),
  );
  assert.deepEqual(stopped, ['how does packing work?']);
  // The map asks the new question once the panel's answer has the
  // re-ranker's reading: asked beside the panel's quick first answer, its
  // own reading would hold that answer back.
  const mapAsked = () =>
    p.evaluate(() => window.__loupeMock.calls.some((c) => c.cmd === 'token_map' && c.args.question === 'where are the tests?'));
  assert.equal(await mapAsked(), false);
  await p.evaluate(() => window.__loupeMock.releaseAssemble());
  await p.waitForFunction(() => {
    const calls = window.__loupeMock.calls;
    const map = calls.findIndex((c) => c.cmd === 'token_map' && c.args.question === 'where are the tests?');
    const read = calls.findIndex((c) => c.cmd === 'assemble' && c.args.question === 'where are the tests?' && !c.args.skipReading);
    return map >= 0 && read >= 0 && read < map;
  });
  await p.locator('[data-testid="map-node"][data-status="included"]').first().waitFor();
  // The stopped ask is not an error the map shows.
  assert.equal(await p.getByTestId('map-error').count(), 0);
  await p.close();
});

test('indexing shows progress, then the status', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/small');
  await p.getByTestId('open-button').click();
  await p.getByTestId('progress').waitFor();
  await p.getByTestId('status').waitFor();
  assert.match(await p.getByTestId('status-files').innerText(), /12 files/);
  assert.match(await p.getByTestId('status-history').innerText(), /128 commits of history/);
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

test('the status bar follows a vector graph built in the background until it answers', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/graph');
  await p.getByTestId('open-button').click();
  const vectors = p.getByTestId('signal-vectors');
  await p.waitForFunction(() => /graph building \d+%/.test(document.querySelector('[data-testid="signal-vectors"]')?.textContent ?? ''));
  assert.match(await vectors.innerText(), /vectors · exact scan, graph building \d+%/);
  // The bar asks again on its own until the graph answers.
  await p.waitForFunction(() => /· graph$/.test(document.querySelector('[data-testid="signal-vectors"]')?.textContent?.trim() ?? ''), null, { timeout: 10000 });
  assert.equal(await vectors.getAttribute('data-state'), 'ready');
  assert.match(await vectors.getAttribute('title'), /graph over the chunk vectors/);
});

test('the status bar says what came from the team store, and when it could not be reached', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/team');
  await p.getByTestId('open-button').click();
  const shared = p.getByTestId('status-shared');
  await shared.waitFor();
  assert.match(await shared.innerText(), /^\d+ files from the team store$/);
  assert.equal(await shared.getAttribute('data-state'), 'pulled');
  const title = await shared.getAttribute('title');
  assert.match(title, /^postgres:\/\/loupe@db\.team\.internal:5432\/loupe\npulled: \d+ files, \d+ vectors/);
  await p.close();

  const down = await page(null);
  await down.getByTestId('path-input').fill('/mock/team-down');
  await down.getByTestId('open-button').click();
  const fault = down.getByTestId('status-shared');
  await fault.waitFor();
  assert.equal(await fault.innerText(), 'team store unreachable, indexed here');
  assert.equal(await fault.getAttribute('data-state'), 'fault');
  assert.match(await fault.getAttribute('title'), /stopped asking: pulling from the shared store: no answer within 5\.0 s/);
  // A project without a store says nothing about one.
  await down.getByTestId('path-input').fill('/mock/small');
  await down.getByTestId('open-button').click();
  await down.waitForFunction(() => document.querySelector('[data-testid="status-shared"]') === null);
  await down.close();
});

test('a first open is usable at its lexical stage; when the vectors land the question re-assembles and marks what changed', async () => {
  const p = await page(null);
  // Short enough that the table scrolls.
  await p.setViewportSize({ width: 1280, height: 480 });
  await p.getByTestId('path-input').fill('/mock/staged');
  await p.getByTestId('open-button').click();
  // Shown while the vectors are still being built, with their progress.
  await p.getByTestId('status').waitFor();
  const vectors = p.getByTestId('signal-vectors');
  assert.equal(await vectors.getAttribute('data-state'), 'arriving');
  await p.waitForFunction(() => /embedding \d+\/50/.test(document.querySelector('[data-testid="signal-vectors"]')?.textContent ?? ''));
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  assert.equal(await p.locator('[data-testid="chunk-row"][data-path="src/steal.rs"]').count(), 0);
  // The user scrolls, opens a row and keeps typing while the vectors arrive.
  await p.locator('[data-testid="chunk-row"][data-path="src/render.rs"]').click();
  await p.getByTestId('row-detail').waitFor();
  await p.getByTestId('chunk-body').evaluate((b) => (b.scrollTop = 40));
  await p.getByTestId('question-input').fill('how does packing work? (draft');
  // They land: the same question is asked again and the new row is marked.
  await p.waitForFunction(() => document.querySelector('[data-testid="signal-vectors"]')?.getAttribute('data-state') === 'ready', null, { timeout: 15000 });
  const entered = p.locator('[data-testid="chunk-row"][data-path="src/steal.rs"]');
  await entered.waitFor();
  assert.equal(await entered.getAttribute('data-change'), 'entered');
  // How many the vectors brought in is the engine's; none left.
  assert.match(await p.getByTestId('landed').innerText(), /\b[1-9]\d* entered the prompt, 0 left/);
  // Nothing the user had was lost.
  assert.equal(await p.getByTestId('question-input').inputValue(), 'how does packing work? (draft');
  assert.equal(await p.getByTestId('chunk-body').evaluate((b) => b.scrollTop), 40);
  assert.match(await p.getByTestId('row-detail').innerText(), /src\/render\.rs/);
  // The next change of the question clears the marks.
  await ask(p, 'how does rendering work?');
  await p.getByTestId('landed').waitFor({ state: 'detached' });
  assert.equal(await entered.getAttribute('data-change'), '');
  await p.close();
});

test('a large first open answers from a scan of its files, then from the index when it lands', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/scan');
  await p.getByTestId('open-button').click();
  // Shown as soon as its 5,000 files are listed, with the index's progress.
  await p.getByTestId('status').waitFor();
  assert.equal(await p.getByTestId('signal-lexical').getAttribute('data-state'), 'scan');
  await p.waitForFunction(() => /file scan · index reading \d+\/5000 files/.test(document.querySelector('[data-testid="signal-lexical"]')?.textContent ?? ''));
  assert.match(await p.getByTestId('status-files').innerText(), /not indexed yet/);
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  // The report says where the prompt came from.
  assert.match(await p.getByTestId('warning').allInnerTexts().then((w) => w.join('\n')), /partial index: signals: a scan of 5000 files/);
  const render = p.locator('[data-testid="chunk-row"][data-path="src/render.rs"]').first();
  assert.equal(await render.getAttribute('data-status'), 'dropped');
  // The index lands: the question is asked again and what it brought in is
  // marked, although an answer from a scan numbers its rows its own way.
  await p.waitForFunction(() => document.querySelector('[data-testid="signal-lexical"]')?.getAttribute('data-state') === 'ready', null, { timeout: 15000 });
  await p.waitForFunction(() => document.querySelector('[data-testid="chunk-row"][data-path="src/render.rs"]')?.getAttribute('data-change') === 'entered');
  assert.match(await p.getByTestId('landed').innerText(), /^with the index: 1 entered the prompt, 0 left$/);
  assert.match(await p.getByTestId('status-files').innerText(), /12 files/);
  assert.equal(await p.getByTestId('warning').count(), 0);
  // Asked again for nothing new (the history re-read, a status refresh):
  // the same prompt keeps its marks.
  await p.locator('[data-testid="watch-status"][data-state="watching"]').waitFor();
  const count = Number(await p.getByTestId('assemble-count').innerText());
  await p.evaluate(() => window.__loupeMock.emitWatch({ kind: 'history', commits: 128 }));
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid="assemble-count"]')?.textContent) > n, count);
  assert.match(await p.getByTestId('landed').innerText(), /^with the index: 1 entered the prompt, 0 left$/);
  assert.equal(await p.locator('[data-testid="chunk-row"][data-path="src/render.rs"]').first().getAttribute('data-change'), 'entered');
  await p.close();
});

test('cancelling a large first open keeps answering from scans', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/scan-cancel/scan');
  await p.getByTestId('open-button').click();
  await p.getByTestId('scan-cancel').click();
  await p.waitForFunction(() => /index not built/.test(document.querySelector('[data-testid="signal-lexical"]')?.textContent ?? ''));
  assert.equal(await p.getByTestId('error-banner').count(), 0);
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  assert.match(await p.getByTestId('warning').allInnerTexts().then((w) => w.join('\n')), /a scan of 5000 files/);
  await p.close();
});

test('the vectors of a first open can be cancelled; lexical search stays', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/staged-cancel/staged');
  await p.getByTestId('open-button').click();
  await p.getByTestId('signals-cancel').click();
  await p.waitForFunction(() => document.querySelector('[data-testid="signal-vectors"]')?.getAttribute('data-state') === 'partial');
  assert.equal(await p.getByTestId('error-banner').count(), 0);
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
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

test("a chunk raised by its leading file shows the rise as its own score segment", async () => {
  const p = await page();
  await ask(p, 'how is the prompt rendered?');
  // The re-ranked answer (the re-ranker is on): the model's share is drawn.
  await p.locator('[data-testid="chunk-row"] .seg.reader').first().waitFor();
  // src/pack.rs leads; its chunk at rank 5 has little evidence of its own
  // and was raised toward the file's best chunk (canned.json: the engine's answer).
  const raised = p.locator('[data-testid="chunk-row"][data-rank="5"]');
  await raised.waitFor();
  assert.equal(await raised.getAttribute('data-path'), 'src/pack.rs');
  const bar = raised.locator('.score .wrap');
  assert.equal(await bar.locator('.seg.sibling').count(), 1);
  const title = (await bar.getAttribute('title')) ?? '';
  assert.match(title, /^score 0\.450$/m);
  assert.match(title, /^its file's lead 0\.375$/m);
  // The segments add up to the score, the rise included.
  const total = await bar.evaluate((el) =>
    [...el.querySelectorAll('.seg')].reduce((sum, s) => sum + parseFloat(s.style.width), 0),
  );
  assert.ok(Math.abs(total - 45.0) < 0.1, `segments sum to ${total}%`);
  // The file's best chunk is not raised.
  const lead = p.locator('[data-testid="chunk-row"][data-rank="1"]');
  assert.equal(await lead.getAttribute('data-path'), 'src/pack.rs');
  assert.equal(await lead.locator('.seg.sibling').count(), 0);
  // The knob at 0: every chunk on its own evidence, no rise anywhere.
  assert.equal(await p.getByTestId('sibling-label').textContent(), '×0.50');
  await p.getByTestId('sibling-share').fill('0');
  await p.waitForFunction(() => {
    const calls = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble');
    return calls[calls.length - 1].args.knobs.sibling_share === 0;
  });
  await p.waitForFunction(() => document.querySelectorAll('[data-testid="chunk-row"] .seg.sibling').length === 0);
  assert.equal(await p.getByTestId('sibling-label').textContent(), '×0.00');
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
  // The folders in between give way; the first folder and the file name with its lines stay whole.
  const shown = await cell.evaluate((el) => {
    const part = (id) => el.querySelector(`[data-testid="${id}"]`);
    const whole = (e) => e !== null && e.scrollWidth <= e.clientWidth + 1;
    return { file: part('path-file')?.textContent, fileWhole: whole(part('path-file')), middleCut: !whole(part('path-middle')) };
  });
  assert.deepEqual(shown, { file: 'worker.rs:1-9', fileWhole: true, middleCut: true });
  // A short path is shown as it is.
  const short = p.locator('[data-testid="chunk-row"][data-path="src/pack.rs"] [data-testid="path-label"]').first();
  assert.equal(await short.textContent(), await short.getAttribute('title'));
  assert.match(await short.textContent(), /^src\/pack\.rs:\d+-\d+$/);
  await p.close();
});

const DEEP = 'vendor/serde_json/src/value/de/some/deeper/folder/mod.rs';

/** How a row's path label is laid out: each part's text, whether it is cut,
 * and whether it lies inside the label's box (not clipped by it). */
function pathLayout(row) {
  return row.locator('[data-testid="path-label"]').evaluate((label) => {
    const box = label.getBoundingClientRect();
    const part = (id) => {
      const e = label.querySelector(`[data-testid="${id}"]`);
      if (!e) return null;
      const r = e.getBoundingClientRect();
      return {
        text: e.textContent,
        cut: e.scrollWidth > e.clientWidth + 1,
        inside: r.left >= box.left - 1 && r.right <= box.right + 1,
        width: r.width,
        minWidth: parseFloat(getComputedStyle(e).minWidth),
        color: getComputedStyle(e).color,
      };
    };
    return { text: label.textContent, title: label.getAttribute('title'), first: part('path-first'), middle: part('path-middle'), file: part('path-file') };
  });
}

/** Layout settled after a resize. */
const settled = (p) => p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

test('a deep path keeps its file name and lines whole; the folders are dimmed and give way, the middle ones first', async () => {
  const p = await page('/mock/deep');
  await ask(p);
  const row = p.locator('[data-testid="chunk-row"][data-rank="1"]');
  await row.waitFor();
  assert.equal(await row.getAttribute('data-path'), DEEP);
  assert.equal(await row.locator('.path').getAttribute('title'), `${DEEP}:112-170`);

  // Wide enough for the first folder: only the folders between give way.
  await p.setViewportSize({ width: 1400, height: 800 });
  await settled(p);
  let shown = await pathLayout(row);
  assert.equal(shown.title, `${DEEP}:112-170`);
  assert.equal(shown.text, `${DEEP}:112-170`, 'the label holds the whole path');
  assert.deepEqual(shown.file && { text: shown.file.text, cut: shown.file.cut, inside: shown.file.inside }, { text: 'mod.rs:112-170', cut: false, inside: true });
  assert.equal(shown.middle?.text, 'serde_json/src/value/de/some/deeper/folder/');
  assert.equal(shown.middle?.cut, true, 'the folders between are shortened');
  assert.deepEqual(shown.first && { text: shown.first.text, cut: shown.first.cut }, { text: 'vendor/', cut: false });
  // The folders are dimmed, the file name is not.
  assert.notEqual(shown.middle?.color, shown.file.color);
  assert.equal(shown.first?.color, shown.middle?.color);

  // Narrow: the folders between are down to their ellipsis, then the first
  // folder gives way; the file name and its lines stay whole.
  await p.setViewportSize({ width: 1100, height: 800 });
  await settled(p);
  shown = await pathLayout(row);
  assert.equal(shown.text, `${DEEP}:112-170`);
  assert.deepEqual(shown.file && { text: shown.file.text, cut: shown.file.cut, inside: shown.file.inside }, { text: 'mod.rs:112-170', cut: false, inside: true });
  const fileEl = row.locator('[data-testid="path-file"]');
  assert.ok(await fileEl.evaluate((e) => e.scrollWidth <= e.clientWidth), 'path-file scrollWidth <= clientWidth');
  assert.ok(shown.middle && shown.middle.cut && shown.middle.width <= shown.middle.minWidth + 1, `the middle is at its least: ${JSON.stringify(shown.middle)}`);
  assert.equal(shown.first?.cut, true, 'then the first folder gives way');
  // Nothing widens the page or the table.
  const fits = await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  assert.ok(fits, 'the page does not scroll sideways');
  await p.close();
});

test("the path column's width is dragged or keyed at its header's edge, kept within bounds, and remembered", async () => {
  const p = await page('/mock/deep');
  // Wide enough for the whole path in a widened column.
  await p.setViewportSize({ width: 1600, height: 800 });
  await ask(p);
  const row = p.locator('[data-testid="chunk-row"][data-rank="1"]');
  await row.waitFor();
  const head = p.getByTestId('path-column-head');
  const handle = p.getByTestId('path-resize');
  const width = async () => (await head.boundingBox())?.width ?? 0;
  const cellWidth = async () => (await row.locator('.path').boundingBox())?.width ?? 0;
  const before = await width();
  assert.ok(before > 0);
  assert.equal(await handle.getAttribute('role'), 'separator');
  assert.equal(await handle.getAttribute('aria-valuenow'), String(Math.round(before)));

  // Drag the handle 60 px to the left: the column, header and rows, narrows by as much.
  const drag = async (dx) => {
    const box = await handle.boundingBox();
    assert.ok(box);
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await p.mouse.move(x, y);
    await p.mouse.down();
    await p.mouse.move(x + dx / 2, y, { steps: 3 });
    await p.mouse.move(x + dx, y, { steps: 3 });
    await p.mouse.up();
    await settled(p);
  };
  await drag(-60);
  const narrower = await width();
  assert.ok(Math.abs(narrower - (before - 60)) <= 2, `${before} → ${narrower}`);
  assert.ok(Math.abs((await cellWidth()) - narrower) <= 2, 'the rows follow the header');
  // The file name and lines stay whole in the narrower column.
  let shown = await pathLayout(row);
  assert.deepEqual({ cut: shown.file?.cut, inside: shown.file?.inside }, { cut: false, inside: true });

  // Wider by dragging right: the folders come back.
  await drag(200);
  const wider = await width();
  assert.ok(Math.abs(wider - (narrower + 200)) <= 2, `${narrower} → ${wider}`);
  shown = await pathLayout(row);
  assert.equal(shown.middle?.cut, false, `the whole path fits in ${wider}px`);

  // From the keyboard: the handle takes focus; arrows step, Home and End go to the bounds.
  await handle.focus();
  await p.keyboard.press('ArrowLeft');
  await settled(p);
  assert.ok(Math.abs((await width()) - (wider - 16)) <= 1, 'ArrowLeft narrows by 16 px');
  await p.keyboard.press('ArrowRight');
  await p.keyboard.press('ArrowRight');
  await settled(p);
  assert.ok(Math.abs((await width()) - (wider + 16)) <= 1, 'ArrowRight widens by 16 px');
  await p.keyboard.press('Home');
  await settled(p);
  const least = Number(await handle.getAttribute('aria-valuemin'));
  assert.ok(least >= 120, `a sensible least width: ${least}`);
  assert.ok(Math.abs((await width()) - least) <= 1, 'Home: the least width');
  assert.equal(await handle.getAttribute('aria-valuenow'), String(least));
  shown = await pathLayout(row);
  assert.deepEqual({ text: shown.file?.text, cut: shown.file?.cut, inside: shown.file?.inside }, { text: 'mod.rs:112-170', cut: false, inside: true });
  // Dragging past the least width stops there.
  await drag(-300);
  assert.ok(Math.abs((await width()) - least) <= 1, 'no narrower than the least width');
  await handle.focus();
  await p.keyboard.press('End');
  await settled(p);
  const most = Number(await handle.getAttribute('aria-valuemax'));
  assert.ok(Math.abs((await width()) - most) <= 1, 'End: the widest');
  const symbol = await p.locator('[data-testid="chunk-row"][data-rank="1"] .symbol').boundingBox();
  assert.ok(symbol && symbol.width > 20, 'the widest still leaves room for the symbol');
  const fits = await p.evaluate(() => {
    const t = document.querySelector('[data-testid="chunk-body"]');
    return document.documentElement.scrollWidth <= window.innerWidth && t !== null && t.scrollWidth <= t.clientWidth + 1;
  });
  assert.ok(fits, 'the widest does not push the table wider');

  // Remembered: the table comes back from the token map at the same width.
  await drag(-100);
  const chosen = await width();
  await p.getByTestId('view-map').click();
  await p.getByTestId('chunk-table').waitFor({ state: 'detached' });
  await p.getByTestId('view-table').click();
  await row.waitFor();
  await settled(p);
  assert.ok(Math.abs((await width()) - chosen) <= 1, `kept at ${chosen}px`);

  // A double-click puts the default back.
  await handle.dblclick();
  await settled(p);
  assert.ok(Math.abs((await width()) - before) <= 1, 'the default width is back');
  await p.close();
});

test('the re-ranker is on: a new question is drawn at once, then re-ranked; a knob moved on it reads at once', async () => {
  const p = await page();
  const readsAfter = (n, files) =>
    p.waitForFunction(
      ([n, files]) => {
        const asked = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').slice(n);
        return asked.some((c) => !c.args.skipReading && c.args.knobs.read_files === files);
      },
      [n, files],
    );
  const question = 'how is the prompt rendered?';
  const before = (await assembleCalls(p)).length;
  await ask(p, question);
  // Today's ranking first, then the same request with the reading (asked
  // again, as any answer is, when an index stage lands: read by then).
  await readsAfter(before, 10);
  const first = (await assembleCalls(p)).slice(before).filter((c) => c.args.question === question);
  assert.ok(first.every((c) => c.args.knobs.read_files === 10));
  assert.deepEqual(
    first.map((c) => Boolean(c.args.skipReading)),
    [true, ...first.slice(1).map(() => false)],
  );
  assert.ok(first.length >= 2);
  // The re-ranked answer shows the model's share in the leading file's score.
  await p.locator('[data-testid="chunk-row"] .seg.reader').first().waitFor();
  // Another knob on the same question: its pairs are read already, no second pass.
  const moved = (await assembleCalls(p)).length;
  await p.getByTestId('read-files').fill('20');
  await readsAfter(moved, 20);
  assert.ok((await assembleCalls(p)).slice(moved).every((c) => !c.args.skipReading));
  // Off: no reading, and no score has the model's share.
  const off = (await assembleCalls(p)).length;
  await p.getByTestId('read-files').fill('0');
  assert.equal(await p.getByTestId('read-files-label').textContent(), 'off');
  await p.waitForFunction(
    (n) => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').slice(n).some((c) => c.args.knobs.read_files === 0),
    off,
  );
  await p.waitForFunction(() => document.querySelectorAll('[data-testid="chunk-row"] .seg.reader').length === 0);
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
  assert.doesNotMatch(await p.getByTestId('prompt-preview').textContent(), /tests\/pack_test\.rs/);

  // The rule says how many candidates it decided.
  assert.equal(await p.getByTestId('weight-count-0').innerText(), '2 matched');

  // The hidden rows can be shown again, marked as hidden.
  await p.getByTestId('show-hidden').check();
  const hidden = p.locator('[data-testid="chunk-row"][data-path="tests/pack_test.rs"]');
  assert.equal(await hidden.getAttribute('data-status'), 'hidden');
  await p.close();
});

test('the token map shows sizes, then what the question put in; it zooms, pins and hides from a block', async () => {
  const p = await page();
  await p.getByTestId('view-map').click();
  // Before a question: sizes only.
  const src = p.locator('[data-testid="map-node"][data-path="src"]');
  await src.waitFor();
  assert.equal(await src.getAttribute('data-status'), 'none');
  assert.match(await p.getByTestId('token-map').textContent(), /Sizes only/);
  const calls = () => p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'token_map'));
  assert.deepEqual((await calls()).at(-1).args.view, { under: '', depth: 2, per_folder: 40 });

  await type(p, 'how does packing work?');
  const pack = p.locator('[data-testid="map-node"][data-path="src/pack.rs"]');
  await p.locator('[data-testid="map-node"][data-path="src/pack.rs"][data-status="included"]').waitFor();
  assert.match(await pack.locator('title').textContent(), /src\/pack\.rs · \d+ tokens · included/);
  await p.getByTestId('map-legend').waitFor();
  assert.equal((await calls()).at(-1).args.question, 'how does packing work?');

  // A file: pin it or ban it from the map; the map follows.
  await pack.click();
  assert.equal(await p.getByTestId('map-selected').getAttribute('data-path'), 'src/pack.rs');
  await p.getByTestId('map-ban').click();
  await p.locator('[data-testid="map-node"][data-path="src/pack.rs"][data-status="banned"]').waitFor();
  assert.deepEqual(await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'mark').at(-1).args.target), {
    kind: 'file',
    path: 'src/pack.rs',
  });

  // A folder: weight 0 on tests/** hides it everywhere; the knob shows the rule.
  // A folder is picked by its header strip (its children cover the rest).
  const header = { position: { x: 6, y: 6 } };
  await p.locator('[data-testid="map-node"][data-path="tests"]').click(header);
  await p.getByTestId('map-weight-0').click();
  await p.locator('[data-testid="map-node"][data-path="tests/pack_test.rs"][data-status="hidden"]').waitFor();
  assert.equal(await p.getByTestId('weight-glob-0').inputValue(), 'tests/**');
  await p.getByTestId('map-weight-clear').click();
  await p.locator('[data-testid="map-node"][data-path="tests/pack_test.rs"][data-status="hidden"]').waitFor({ state: 'detached' });

  // A folder can be banned (and unbanned) as a whole, like a file.
  await p.locator('[data-testid="map-node"][data-path="tests"]').click(header);
  assert.equal(await p.getByTestId('map-ban').innerText(), 'Ban folder');
  await p.getByTestId('map-ban').click();
  assert.deepEqual(await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'mark').at(-1).args.target), {
    kind: 'folder',
    path: 'tests',
  });
  await p.locator('[data-testid="map-node"][data-path="tests/pack_test.rs"][data-status="banned"]').waitFor();
  await p.locator('[aria-label="Unban tests/"]').click();
  await p.locator('[data-testid="map-node"][data-path="tests/pack_test.rs"][data-status="banned"]').waitFor({ state: 'detached' });

  // Zoom into a folder and back out by the breadcrumbs.
  await p.locator('[data-testid="map-node"][data-path="docs"]').dblclick(header);
  await p.locator('[data-testid="map-crumb"][data-path="docs"]').waitFor();
  assert.equal((await calls()).at(-1).args.view.under, 'docs');
  assert.equal(await p.locator('[data-testid="map-node"][data-path="src/pack.rs"]').count(), 0);
  await p.locator('[data-testid="map-crumb"][data-path=""]').click();
  await pack.waitFor();

  // Back to the table.
  await p.getByTestId('view-table').click();
  await p.getByTestId('chunk-table').waitFor();
  await p.close();
});

test('the token map of 2,000 files folds what it cannot draw and keeps every token', async () => {
  const p = await page('/mock/many');
  await p.getByTestId('view-map').click();
  await p.locator('[data-testid="map-node"][data-path="src"][data-more="false"]').waitFor();
  // 200 folders under src/: 40 drawn, the rest one block whose size is theirs.
  const more = p.locator('[data-testid="map-node"][data-more="true"][data-path="src"]');
  assert.match(await more.locator('title').textContent(), /^160 more in src/);
  assert.ok((await p.locator('[data-testid="map-node"]').count()) < 500);
  await more.click();
  await p.locator('[data-testid="map-crumb"][data-path="src"]').waitFor();
  await p.close();
});

test('golden questions run in the app, re-run on a knob change, and show what a weight broke', async () => {
  const p = await page('/mock/small');
  await p.getByTestId('golden-button').click();
  await p.getByTestId('golden-absent').waitFor();
  await p.close();

  const g = await page('/mock/golden');
  await g.getByTestId('golden-button').click();
  const summary = g.getByTestId('golden-summary');
  await g.locator('[data-testid="golden-summary"][data-found="2"][data-expected="2"]').waitFor();
  assert.match(await g.getByTestId('golden-button').innerText(), /golden 2\/2/);
  // Hide tests/**: the second question fails and says why, and the button turns red.
  await g.getByTestId('weight-add').click();
  await g.getByTestId('weight-glob-0').fill('tests/**');
  await g.getByTestId('weight-value-0').fill('0');
  await g.locator('[data-testid="golden-summary"][data-found="1"]').waitFor();
  const failed = g.locator('[data-testid="golden-question"][data-passed="false"]');
  assert.match(await failed.innerText(), /where are the tests\?/);
  assert.match(await failed.locator('[data-testid="golden-item"]').innerText(), /tests\/pack_test\.rs.*dropped: hidden by path weight tests\/\*\*/s);
  assert.match(await summary.innerText(), /1 of 2 expected items/);
  const runs = await g.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'golden_run'));
  assert.deepEqual(runs.at(-1).args.knobs.path_weights, [{ glob: 'tests/**', weight: 0 }]);
  // "Ask" puts the question in the main panel.
  await failed.getByTestId('golden-ask').click();
  assert.equal(await g.getByTestId('question-input').inputValue(), 'where are the tests?');
  await g.close();
});

test('a lower budget drops more and reports truncation; copy confirms', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('report').waitFor();
  assert.equal(await p.getByTestId('truncation').getAttribute('data-truncated'), 'false');
  await p.getByTestId('budget-input').fill(TIGHT);
  await p.getByTestId('budget-input').press('Enter');
  await p.locator('[data-testid="truncation"][data-truncated="true"]').waitFor();
  assert.ok(Number(await p.getByTestId('truncation').getAttribute('data-dropped')) > 0);
  assert.match(await p.getByTestId('verdict').innerText(), /^Truncated: \d+ in the prompt( \(\d+ coarser\))?; \d+ left out: \d+ over budget\./);
  // The budget bar is stacked by section; the answer reserve is listed apart.
  assert.ok((await p.getByTestId('budget-segment').count()) >= 3);
  assert.match(await p.getByTestId('answer-reserve-note').innerText(), /4096/);

  await p.getByTestId('copy-button').click();
  await p.getByTestId('copy-confirm').waitFor();
  const copied = await p.evaluate(() => window.__loupeMock.copied);
  assert.equal(copied.length, 1);
  assert.equal(copied[0], await p.getByTestId('prompt-preview').textContent());
  await p.close();
});

const row = (p, path) => p.locator(`[data-testid="chunk-row"][data-path="${path}"]`);
/** A budget that drops rows of the fixture's answer (a larger one only
 * shows them at a coarser level of detail). */
const TIGHT = '300';
/** A row's first and last line, from its path cell's `path:first-last`. */
async function linesOf(r) {
  const title = await r.locator('.path').getAttribute('title');
  const [first, last] = (title ?? '').split(':').at(-1).split('-').map(Number);
  return { first, last };
}

test('pinning a dropped row puts it in the prompt at score 1; a reload keeps the pin; unpin restores', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('budget-input').fill(TIGHT);
  await p.getByTestId('budget-input').press('Enter');
  await p.locator('[data-testid="truncation"][data-truncated="true"]').waitFor();
  // The lowest-ranked row the budget dropped.
  const dropped = p.locator('[data-testid="chunk-row"][data-status="dropped"]').last();
  const path = await dropped.getAttribute('data-path');
  const { first } = await linesOf(dropped);

  await dropped.getByTestId('pin-button').click();
  const pinned = p.locator('[data-testid="chunk-row"][data-marked="pin"]');
  // In the prompt (at a coarser level of detail, if that is what fits).
  await p.locator('[data-testid="chunk-row"][data-marked="pin"]:is([data-status="included"], [data-status="degraded"])').waitFor();
  assert.equal(await pinned.getAttribute('data-rank'), '1');
  assert.equal(await pinned.getAttribute('data-path'), path);
  assert.ok((await p.getByTestId('prompt-preview').textContent()).includes(`@${path}:${first}-`));
  assert.ok((await p.getByTestId('selection').innerText()).includes(path));
  const marks = await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'mark'));
  assert.deepEqual({ ...marks[0].args.target, symbol: undefined }, { kind: 'chunk', path, symbol: undefined, start_line: first });
  assert.equal(marks[0].args.mark, 'pin');

  // A restart: the pin and the budget come back from the project's prefs.
  await p.waitForFunction((b) => window.__loupeMock.calls.some((c) => c.cmd === 'save_knobs' && c.args.knobs.budget === b), Number(TIGHT));
  await p.reload();
  await p.getByTestId('path-input').fill('/mock/small');
  await p.getByTestId('open-button').click();
  await p.getByTestId('status').waitFor();
  assert.equal(await p.getByTestId('budget-input').inputValue(), TIGHT);
  await ask(p);
  await p.locator(`[data-testid="chunk-row"][data-path="${path}"][data-marked="pin"]`).waitFor();

  await pinned.getByTestId('pin-button').click();
  await pinned.waitFor({ state: 'detached' });
  await p.getByTestId('selection').waitFor({ state: 'detached' });
  assert.ok((await p.locator(`[data-testid="chunk-row"][data-path="${path}"][data-status="dropped"]`).count()) > 0);
  await p.close();
});

test('a page whose process died comes back to the project and question it showed; a restart does not', async () => {
  const p = await page();
  await ask(p);
  const prompt = await p.getByTestId('prompt-preview').textContent();
  // The engine outlives the page: it is asked what the page showed.
  await p.evaluate(() => window.__loupeMock.killPage());
  await p.reload();
  await p.getByTestId('status').waitFor();
  await p.getByTestId('chunk-table').waitFor();
  assert.equal(await p.getByTestId('question-input').inputValue(), 'how does packing work?');
  assert.equal(await p.getByTestId('prompt-preview').textContent(), prompt);
  const calls = await p.evaluate(() => window.__loupeMock.calls.map((c) => c.cmd));
  assert.ok(calls.includes('shown_project') && calls.includes('watch_project'), calls.join(' '));
  assert.equal(calls.filter((c) => c.startsWith('open_')).length, 0, 'shown without opening it again');
  // A restart: the engine kept nothing, the first screen.
  await p.reload();
  await p.getByTestId('empty-state').waitFor();
  assert.equal(await p.getByTestId('status').count(), 0);
  await p.close();
});

test('a page that died while the vectors were arriving follows them to the end after its reload', async () => {
  const p = await page(null);
  await p.getByTestId('path-input').fill('/mock/staged');
  await p.getByTestId('open-button').click();
  await p.getByTestId('status').waitFor();
  await p.waitForFunction(() => /embedding \d+\/50/.test(document.querySelector('[data-testid="signal-vectors"]')?.textContent ?? ''));
  await ask(p);
  assert.equal(await p.locator('[data-testid="chunk-row"][data-path="src/steal.rs"]').count(), 0);
  await p.evaluate(() => window.__loupeMock.killPage());
  await p.reload();
  // Back with its question and answer, the vectors still arriving.
  await p.getByTestId('chunk-table').waitFor();
  assert.equal(await p.getByTestId('question-input').inputValue(), 'how does packing work?');
  await p.waitForFunction(() => /embedding \d+\/50/.test(document.querySelector('[data-testid="signal-vectors"]')?.textContent ?? ''));
  // They land: asked again, the row they bring marked.
  await p.waitForFunction(() => document.querySelector('[data-testid="signal-vectors"]')?.getAttribute('data-state') === 'ready', null, { timeout: 15000 });
  const entered = p.locator('[data-testid="chunk-row"][data-path="src/steal.rs"]');
  await entered.waitFor();
  assert.equal(await entered.getAttribute('data-change'), 'entered');
  const opens = await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'open_project').length);
  assert.equal(opens, 1, 'followed with one run of its own');
  await p.close();
});

test('banning a row takes it out of the prompt and lists it as banned', async () => {
  const p = await page();
  await ask(p);
  await row(p, 'src/fit.rs').getByTestId('ban-button').click();
  await p.locator('[data-testid="chunk-row"][data-path="src/fit.rs"][data-status="banned"]').waitFor();
  assert.doesNotMatch(await p.getByTestId('prompt-preview').textContent(), /src\/fit\.rs/);
  await p.getByTestId('unban').click();
  await p.locator('[data-testid="chunk-row"][data-path="src/fit.rs"][data-status="included"]').waitFor();
  await p.close();
});

test('the prompt and the row detail are highlighted in their languages, and the text stays the prompt', async () => {
  const p = await page();
  await ask(p);
  const preview = p.getByTestId('prompt-preview');
  await p.locator('[data-testid="prompt-preview"][data-highlighted="true"]').waitFor();
  // The Rust documents' keywords and the XML wrapper's tags are coloured.
  assert.ok((await preview.locator('.hljs-keyword', { hasText: 'pub' }).count()) > 0, 'no Rust keyword coloured');
  assert.ok((await preview.locator('.hljs-tag').count()) > 0, 'no XML tag coloured');
  // The Markdown document is not read as Rust.
  assert.equal(await preview.locator('.hljs-section', { hasText: '# Packing' }).count(), 1);
  // What is shown is exactly what is copied.
  await p.getByTestId('copy-button').click();
  await p.getByTestId('copy-confirm').waitFor();
  const copied = await p.evaluate(() => window.__loupeMock.copied.at(-1));
  assert.equal(await preview.textContent(), copied);

  // The source view: whole-file highlighting cut into lines (each line a comment here).
  await row(p, 'src/render.rs').click();
  await p.getByTestId('detail-source').waitFor();
  assert.equal(await p.locator('[data-testid="detail-source"] .line .hljs-comment').count(), 120);
  assert.match(await p.getByTestId('detail-source').innerText(), /src\/render\.rs line 120/);
  await p.close();
});

test('clicking a row shows it as in the prompt next to its source; pin the file from there', async () => {
  const p = await page();
  await ask(p);
  await row(p, 'src/render.rs').click();
  const d = p.getByTestId('row-detail');
  await d.waitFor();
  await p.waitForFunction(() => document.querySelector('[data-testid="detail-rendered"]')?.textContent?.includes('fn render'));
  const source = await p.getByTestId('detail-source').innerText();
  assert.match(source, /src\/render\.rs line 120/);
  // The chunk's lines are marked in the source.
  const { first, last } = await linesOf(row(p, 'src/render.rs'));
  assert.equal(await p.locator('[data-testid="detail-source"] .line.in').count(), last - first + 1);
  await p.getByTestId('detail-lod').selectOption('4');
  await p.waitForFunction(() => document.querySelector('[data-testid="detail-rendered"]')?.textContent?.includes('…'));
  const calls = await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'chunk_detail'));
  assert.deepEqual(calls.map((c) => c.args.lod), [0, 4]);

  await p.getByTestId('detail-pin-file').click();
  await p.locator('[data-testid="chunk-row"][data-path="src/render.rs"][data-marked="pin"]').waitFor();
  assert.equal(await p.getByTestId('detail-pin-file').innerText(), 'Unpin file');
  await p.keyboard.press('Escape');
  await d.waitFor({ state: 'detached' });
  await p.close();
});

test('an unreadable source is explained in the detail', async () => {
  const p = await page('/mock/unreadable');
  await ask(p);
  await p.getByTestId('chunk-row').first().click();
  assert.match(await p.getByTestId('detail-source-error').innerText(), /permission denied/);
  await p.close();
});

test('every new knob re-assembles with its value', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('report').waitFor();
  const lastKnobs = async () => {
    const calls = await assembleCalls(p);
    return calls[calls.length - 1].args.knobs;
  };
  const changes = [
    [() => p.getByTestId('recency-weight').fill('0.2'), (k) => k.recency_weight === 0.2],
    [async () => { await p.getByTestId('recency-half-life').fill('7'); await p.getByTestId('recency-half-life').press('Enter'); }, (k) => k.recency_half_life_days === 7],
    [async () => { await p.getByTestId('k-input').fill('5'); await p.getByTestId('k-input').press('Enter'); }, (k) => k.k === 5],
    [() => p.getByTestId('min-score-toggle').check(), (k) => k.min_score === 0.2],
    [() => p.getByTestId('min-score').fill('0.5'), (k) => k.min_score === 0.5],
    [async () => { await p.getByTestId('answer-reserve').fill('1024'); await p.getByTestId('answer-reserve').press('Enter'); }, (k) => k.answer_reserve === 1024],
    [() => p.getByTestId('toggle-sources').uncheck(), (k) => k.toggles.sources === false],
    [() => p.getByTestId('toggle-scores').check(), (k) => k.toggles.scores === true],
    [() => p.getByTestId('toggle-structured').check(), (k) => k.toggles.structured === true],
    [() => p.getByTestId('toggle-sanitize').uncheck(), (k) => k.sanitize === false],
    [() => p.getByTestId('toggle-redact').uncheck(), (k) => k.redact_secrets === false],
    [async () => { await p.getByTestId('primers-input').fill('AGENTS.md, docs/knobs.md'); await p.getByTestId('primers-input').press('Enter'); }, (k) => k.primers.join('|') === 'AGENTS.md|docs/knobs.md'],
    [() => p.getByTestId('type-override').selectOption('debugging'), (k) => k.question_type === 'debugging'],
    [() => p.getByTestId('intent-override').selectOption('tests'), (k) => k.intent === 'tests'],
  ];
  for (const [act, check] of changes) {
    await act();
    await p.waitForFunction(
      (src) => {
        const calls = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble');
        return new Function('k', `return (${src})(k)`)(calls[calls.length - 1].args.knobs);
      },
      check.toString(),
    );
  }
  const k = await lastKnobs();
  assert.equal(k.question_type, 'debugging');
  assert.match(await p.getByTestId('detected').innerText(), /debugging · tests/);
  // Sources off: no citations in the prompt.
  assert.doesNotMatch(await p.getByTestId('prompt-preview').textContent(), /source="@/);
  // Min score 0.5 dropped the weakest rows for that reason.
  assert.match(await p.getByTestId('chunk-table').innerText(), /below the minimum score/);
  await p.close();
});

test('knobs persist per project over the team defaults; reset goes back to them', async () => {
  const p = await page('/mock/team');
  assert.equal(await p.getByTestId('budget-input').inputValue(), '3000');
  assert.match(await p.getByTestId('settings-warning').innerText(), /unknown knob `colour`/);
  await p.getByTestId('primer-boost').fill('0.6');
  await p.waitForFunction(() => window.__loupeMock.calls.some((c) => c.cmd === 'save_knobs' && c.args.knobs.primer_boost === 0.6));
  await p.reload();
  await p.getByTestId('path-input').fill('/mock/team');
  await p.getByTestId('open-button').click();
  await p.getByTestId('status').waitFor();
  assert.equal(await p.getByTestId('primer-boost').inputValue(), '0.6');
  assert.equal(await p.getByTestId('budget-input').inputValue(), '3000');
  await p.getByTestId('knobs-reset').click();
  assert.equal(await p.getByTestId('primer-boost').inputValue(), '0.25');
  assert.equal(await p.getByTestId('budget-input').inputValue(), '3000');
  await p.close();
});

test('presets are saved and applied', async () => {
  const p = await page();
  await p.getByTestId('budget-input').fill('1234');
  await p.getByTestId('budget-input').press('Enter');
  await p.getByTestId('preset-name').fill('tight');
  await p.getByTestId('preset-save').click();
  await p.getByTestId('budget-input').fill('5000');
  await p.getByTestId('budget-input').press('Enter');
  await p.getByTestId('preset-select').selectOption('tight');
  await p.getByTestId('preset-apply').click();
  assert.equal(await p.getByTestId('budget-input').inputValue(), '1234');
  await p.getByTestId('preset-delete').click();
  assert.equal(await p.locator('[data-testid="preset-select"] option').count(), 1);
  await p.close();
});

test('recent projects are listed on the open screen and reopen in one click', async () => {
  const p = await page();
  await p.reload();
  const list = p.getByTestId('recent-list');
  await list.waitFor();
  assert.match(await list.innerText(), /\/mock\/small/);
  await p.getByTestId('recent-open').first().click();
  await p.getByTestId('status').waitFor();
  assert.equal(await p.getByTestId('status-root').innerText(), '/mock/small');
  await p.reload();
  await p.getByTestId('recent-forget').first().click();
  await list.waitFor({ state: 'detached' });
  await p.close();
});

test('the watcher indicator shows a change and the table re-assembles', async () => {
  const p = await page();
  await ask(p);
  await p.locator('[data-testid="watch-status"][data-state="watching"]').waitFor();
  const before = Number(await p.getByTestId('assemble-count').innerText());
  await p.evaluate(() => window.__loupeMock.emitWatch({ kind: 'changed', paths: 1 }));
  await p.locator('[data-testid="watch-status"][data-state="updating"]').waitFor();
  await p.evaluate(() => window.__loupeMock.emitWatch({ kind: 'indexed', generation: 2, files_changed: 1, files_deleted: 0 }));
  await p.locator('[data-testid="watch-status"][data-state="updated"]').waitFor();
  assert.match(await p.getByTestId('watch-status').innerText(), /index updated · 1 file/);
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid="assemble-count"]')?.textContent) > n, before);
  await p.close();
});

test('a moved HEAD shows "commit history" and re-assembles', async () => {
  const p = await page();
  await ask(p);
  await p.locator('[data-testid="watch-status"][data-state="watching"]').waitFor();
  const before = Number(await p.getByTestId('assemble-count').innerText());
  await p.evaluate(() => window.__loupeMock.emitWatch({ kind: 'history', commits: 42 }));
  await p.locator('[data-testid="watch-status"][data-state="updated"]').waitFor();
  assert.match(await p.getByTestId('watch-status').innerText(), /commit history/);
  await p.waitForFunction((n) => Number(document.querySelector('[data-testid="assemble-count"]')?.textContent) > n, before);
  await p.close();
});

test('@ autocompletes files and symbols from the keyboard', async () => {
  const p = await page();
  const box = p.getByTestId('question-input');
  await box.fill('explain ');
  await box.pressSequentially('@rend');
  await p.getByTestId('mention-list').waitFor();
  const values = await p.getByTestId('mention-option').evaluateAll((els) => els.map((e) => e.getAttribute('data-value')));
  assert.deepEqual(values, ['src/render.rs', 'tests/render_test.rs', 'render', 'renders_xml']);
  await box.press('ArrowDown');
  await box.press('ArrowDown');
  await box.press('Enter');
  assert.equal(await box.inputValue(), 'explain @render ');
  await p.getByTestId('mention-list').waitFor({ state: 'detached' });
  // Enter with no list open asks the question.
  await box.press('Enter');
  await p.getByTestId('chunk-table').waitFor();
  await p.close();
});

test('save as file writes the prompt through our command; stale and redaction flags show', async () => {
  const p = await page('/mock/stale');
  await ask(p);
  await p.getByTestId('save-button').click();
  await p.getByTestId('copy-confirm').waitFor();
  assert.match(await p.getByTestId('copy-confirm').innerText(), /Saved .* to \/mock\/out\/prompt\.xml/);
  const saved = await p.evaluate(() => window.__loupeMock.saved);
  assert.equal(saved[0].text, await p.getByTestId('prompt-preview').textContent());
  assert.match(await p.getByTestId('stale-flag').innerText(), /1 stale file/);
  assert.ok((await p.getByTestId('warning').allInnerTexts()).some((w) => /stale: src\/pack\.rs/.test(w)));
  await p.close();

  const q = await page('/mock/secret');
  await ask(q);
  assert.match(await q.getByTestId('redaction-flag').innerText(), /1 redacted/);
  assert.match(await q.getByTestId('prompt-preview').textContent(), /\[REDACTED:aws_access_key_id\]/);
  await q.getByTestId('toggle-redact').uncheck();
  await q.getByTestId('redaction-flag').waitFor({ state: 'detached' });
  await q.close();
});

test('Ctrl+Shift+C copies the prompt', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('report').waitFor();
  await p.keyboard.press('Control+Shift+C');
  await p.getByTestId('copy-confirm').waitFor();
  assert.equal((await p.evaluate(() => window.__loupeMock.copied)).length, 1);
  await p.close();
});

test('reopening an indexed project is instant: no progress bar, a background check', async () => {
  const p = await page();
  await p.reload();
  await p.getByTestId('path-input').fill('/mock/small');
  await p.getByTestId('open-button').click();
  await p.getByTestId('status').waitFor();
  // Shown before the incremental pass finished, which runs in the background.
  assert.equal(await p.getByTestId('progress').count(), 0);
  await p.getByTestId('refreshing').waitFor({ state: 'detached' });
  const cmds = await p.evaluate(() => window.__loupeMock.calls.map((c) => c.cmd).filter((c) => c.startsWith('open_')));
  assert.deepEqual(cmds, ['open_indexed', 'open_project']);
  await ask(p);
  await p.getByTestId('chunk-row').first().waitFor();
  await p.close();
});

test('a type or intent override lasts for its question only', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('type-override').selectOption('debugging');
  await p.waitForFunction(() => document.querySelector('[data-testid="detected"]')?.textContent?.includes('debugging'));
  await ask(p, 'where are tokens counted?');
  await p.waitForFunction(() => !document.querySelector('[data-testid="detected"]')?.textContent?.includes('debugging'));
  assert.equal(await p.getByTestId('type-override').inputValue(), await p.locator('[data-testid="type-override"] option').first().getAttribute('value'));
  await p.close();
});

test("the preamble of the question's type can be rewritten, saved with the knobs, and put back", async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('instructions-edit').click();
  const text = p.getByTestId('instructions-text');
  const builtin = CANNED.builtin_instructions;
  assert.equal(await text.inputValue(), builtin.architectural, 'the built-in text of the detected type to start from');
  await text.fill('Answer as a haiku.');
  await p.getByTestId('instructions-apply').click();
  await p.waitForFunction(
    () =>
      window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args.knobs.instructions.architectural ===
      'Answer as a haiku.',
  );
  await p.waitForFunction(() => document.querySelector('[data-testid="prompt-preview"]')?.textContent?.includes('Answer as a haiku.'));
  assert.equal(await p.getByTestId('instructions-edit').getAttribute('data-own'), 'true');
  // Another type shows its own (built-in) text; the review type is one to pick.
  await p.getByTestId('type-override').selectOption('review');
  await p.waitForFunction((t) => document.querySelector('[data-testid="instructions-text"]')?.value === t, builtin.review);
  await p.getByTestId('type-override').selectOption({ index: 0 });
  await p.waitForFunction(() => document.querySelector('[data-testid="instructions-text"]')?.value === 'Answer as a haiku.');
  await p.getByTestId('instructions-reset').click();
  await p.waitForFunction((t) => document.querySelector('[data-testid="prompt-preview"]')?.textContent?.includes(t), builtin.architectural);
  assert.equal(await p.getByTestId('instructions-edit').getAttribute('data-own'), 'false');
  await p.close();
});

test('the secondary LLM is turned on in settings, its terms shown in the report, and turned off', async () => {
  const p = await page();
  await ask(p);
  assert.equal(await p.getByTestId('search-terms').count(), 0, 'off by default');
  await p.getByTestId('expander').locator('summary').click();
  await p.getByTestId('expander-url').fill('localhost:11434');
  await p.getByTestId('expander-save').click();
  assert.match(await p.getByTestId('expander-error').innerText(), /http:\/\//);
  await p.getByTestId('expander-url').fill('http://localhost:11434/v1');
  await p.getByTestId('expander-model').fill('qwen2.5-coder');
  await p.getByTestId('expander-key').fill('sk-test');
  await p.getByTestId('expander-save').click();
  await p.locator('[data-testid="expander"][data-on="true"]').waitFor();
  const saved = await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'save_expander_settings').at(-1).args.settings);
  assert.deepEqual(saved, { base_url: 'http://localhost:11434/v1', model: 'qwen2.5-coder', api_key: 'sk-test', timeout_ms: 5000 });
  // The question is asked again with it; the report says what it added.
  await p.getByTestId('search-terms').waitFor();
  assert.equal(await p.getByTestId('search-terms').innerText(), 'search terms from qwen2.5-coder: pack_items, budget');
  assert.equal(await p.getByTestId('expander-key').inputValue(), '', 'the key is never shown back');
  assert.match(await p.getByTestId('expander-key').getAttribute('placeholder'), /stored/);
  await p.getByTestId('expander-off').click();
  await p.locator('[data-testid="expander"][data-on="false"]').waitFor();
  await p.getByTestId('search-terms').waitFor({ state: 'detached' });
  await p.close();
});

test('the model picker says whether the count is exact or estimated, and the margin', async () => {
  const p = await page();
  await ask(p);
  const line = p.getByTestId('model-count');
  assert.equal(await line.getAttribute('data-exact'), 'true');
  assert.match(await line.innerText(), /Counted exactly with gpt-4o's own tokenizer \(o200k_base\)/);
  await p.getByTestId('model-select').selectOption('claude-sonnet-4');
  await p.waitForFunction(() => document.querySelector('[data-testid="model-count"]')?.getAttribute('data-exact') === 'false');
  assert.match(await line.innerText(), /Estimated with cl100k_base; 22% of the budget kept free/);
  await p.close();
});

test('a model of your own is added, picked and sets the default budget', async () => {
  const p = await page();
  await ask(p);
  await p.getByTestId('custom-models').locator('summary').click();
  await p.getByTestId('model-add').click();
  await p.getByTestId('model-name-0').fill('My-Llama');
  await p.getByTestId('model-window-0').fill('8000');
  await p.getByTestId('model-window-0').press('Enter');
  await p.getByTestId('model-budget-0').fill('900');
  await p.getByTestId('model-budget-0').press('Enter');
  await p.getByTestId('model-select').selectOption('my-llama');
  assert.equal(await p.getByTestId('budget-input').inputValue(), '900');
  await p.waitForFunction(() => {
    const calls = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble');
    const k = calls[calls.length - 1].args.knobs;
    return k.model === 'my-llama' && k.models[0]?.default_budget === 900 && k.models[0]?.encoding === 'cl100k_base';
  });
  // Counted against the model's own 900, less its 10% safety margin.
  await p.waitForFunction(() => Number(document.querySelector('[data-testid="budget-used"]')?.textContent?.match(/\/ (\d+)/)?.[1]) < 900);
  const usable = Number((await p.getByTestId('budget-used').innerText()).match(/\/ (\d+)/)?.[1]);
  assert.ok(usable > 700 && usable < 900, `usable ${usable} of 900`);
  await p.getByTestId('model-remove-0').click();
  assert.equal(await p.getByTestId('model-row').count(), 0);
  await p.close();
});

test('an agent call shows up live, opens in the inspector, and its knobs can be saved for agents', async () => {
  const p = await page();
  await ask(p, 'how is the prompt rendered?');
  const mine = await p.getByTestId('budget-input').inputValue();
  await p.locator('[data-testid="agent-requests-button"][data-count="0"]').waitFor();
  await p.evaluate(() =>
    window.__loupeMock.agentCall('where are items packed?', { path_weights: [{ glob: 'docs/**', weight: 0 }] }),
  );
  // The poll picks it up with nothing clicked.
  await p.locator('[data-testid="agent-requests-button"][data-new="1"]').waitFor({ timeout: 5000 });
  await p.getByTestId('agent-requests-button').click();
  assert.equal(await p.getByTestId('agent-requests-button').getAttribute('data-new'), '0');
  const call = p.getByTestId('agent-request');
  assert.equal(await call.count(), 1);
  assert.match(await call.innerText(), /where are items packed\?[\s\S]*mock-agent 1\.0/);
  await call.click();

  // The inspector asks the agent's question with the agent's knobs: the very prompt it got.
  await p.getByTestId('agent-banner').waitFor();
  await p.locator('[data-testid="agent-match"][data-match="same"]').waitFor();
  assert.equal(await p.getByTestId('question-input').inputValue(), 'where are items packed?');
  assert.equal(await p.getByTestId('budget-input').inputValue(), '4000');
  const lastCall = (cmd) =>
    p.evaluate((c) => window.__loupeMock.calls.filter((x) => x.cmd === c).at(-1)?.args ?? null, cmd);
  assert.equal((await lastCall('assemble')).agentRequest, 'call-1');
  await row(p, 'src/pack.rs').first().waitFor();
  await row(p, 'docs/packing.md').waitFor({ state: 'detached' }); // hidden by the agent's weight

  // Re-tuned, the prompt is no longer the agent's, and the user's own knobs are left alone.
  const savesBefore = await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'save_knobs').length);
  await p.getByTestId('budget-input').fill('1000');
  await p.getByTestId('budget-input').press('Enter');
  await p.locator('[data-testid="agent-match"][data-match="different"]').waitFor();
  await p.getByTestId('agent-save-knobs').click();
  await p.getByTestId('agent-note').waitFor();
  const saved = await p.evaluate(() => window.__loupeMock.agentKnobs());
  assert.equal(saved.budget, 1000);
  assert.deepEqual(saved.path_weights, [{ glob: 'docs/**', weight: 0 }]);
  await p.getByTestId('agent-knobs-saved').waitFor();

  // Back to the user's question and knobs, unchanged.
  await p.getByTestId('agent-close').click();
  await p.getByTestId('agent-banner').waitFor({ state: 'detached' });
  assert.equal(await p.getByTestId('question-input').inputValue(), 'how is the prompt rendered?');
  assert.equal(await p.getByTestId('budget-input').inputValue(), mine);
  await p.waitForFunction(() => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args.agentRequest === null);
  const saves = await p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'save_knobs').map((c) => c.args.knobs.budget));
  assert.ok(saves.slice(savesBefore).every((b) => b !== 1000), `the agent's budget was saved as the user's: ${saves}`);

  // The next agent call starts from the saved knobs; forgetting them stops that.
  await p.evaluate(() => window.__loupeMock.agentCall('and rendering?'));
  await p.locator('[data-testid="agent-requests-button"][data-count="2"]').waitFor({ timeout: 5000 });
  await p.getByTestId('agent-request').first().click();
  await p.locator('[data-testid="agent-match"][data-match="same"]').waitFor();
  await row(p, 'src/pack.rs').first().waitFor();
  await row(p, 'docs/packing.md').waitFor({ state: 'detached' }); // the saved path weight
  await p.getByTestId('agent-knobs-forget').click();
  await p.getByTestId('agent-knobs-saved').waitFor({ state: 'detached' });
  assert.equal(await p.evaluate(() => window.__loupeMock.agentKnobs()), null);
  await p.close();
});

test('the Changes switch reviews a diff, with or without a question, and says which', async () => {
  const p = await page();
  await p.getByTestId('changes-toggle').check();
  // No question needed: the diff is the question.
  await p.getByTestId('chunk-table').waitFor();
  const lastChange = () =>
    p.evaluate(() => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args.change ?? null);
  assert.equal(await lastChange(), 'unstaged');
  // The fixture's unstaged change adds `room_left` to src/pack.rs.
  assert.match(await p.getByTestId('changes-summary').innerText(), /unstaged changes: 1 file, 1 hunk, \+6 lines · 1 pinned/);
  assert.match(await p.getByTestId('prompt-preview').textContent(), /as a unified diff:[\s\S]*\+pub fn room_left/);
  await p.locator('[data-testid="chunk-row"][data-path="src/pack.rs"][data-pinned="true"]').waitFor();

  // As code: the knob goes with the call, and stays a knob (saved with the others).
  await p.getByTestId('changes-as-code').check();
  await p.waitForFunction(
    () => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args.knobs.toggles.diff_as_code === true,
  );
  await p.waitForFunction(() => document.querySelector('[data-testid="prompt-preview"]')?.textContent?.includes('+ 32 | pub fn room_left('));
  await p.getByTestId('changes-as-code').uncheck();
  await p.waitForFunction(() => document.querySelector('[data-testid="prompt-preview"]')?.textContent?.includes('+pub fn room_left('));

  await p.getByTestId('changes-spec').selectOption('staged');
  await p.waitForFunction(() => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args.change === 'staged');
  await p.getByTestId('changes-spec').selectOption('range');
  await p.getByTestId('changes-range').fill('v1..HEAD');
  await p.getByTestId('changes-range').press('Enter');
  await p.waitForFunction(() => window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args.change === 'v1..HEAD');
  assert.match(await p.getByTestId('changes-summary').innerText(), /^v1\.\.HEAD: /);

  // With a question too; a bad range is the backend's clear error.
  await type(p, 'is the budget respected?');
  await p.waitForFunction(() => {
    const a = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args;
    return a?.question === 'is the budget respected?' && a?.change === 'v1..HEAD';
  });
  await p.getByTestId('changes-range').fill('HEAD');
  await p.getByTestId('changes-range').press('Enter');
  await p.locator('[data-testid="error-banner"][data-code="bad_request"]').waitFor();
  assert.match(await p.getByTestId('error-message').innerText(), /BASE\.\.HEAD/);

  // Off again: the question alone.
  await p.getByTestId('changes-toggle').uncheck();
  await p.waitForFunction(() => {
    const a = window.__loupeMock.calls.filter((c) => c.cmd === 'assemble').at(-1)?.args;
    return a?.change === null && a?.question === 'is the budget respected?';
  });
  await p.getByTestId('changes-summary').waitFor({ state: 'detached' });
  await p.close();
});
