// The app's memory with a project open, idle after a question (issue 13:
// "App RSS with the vendor corpus open and idle, after a question"). The
// release app (`make bench-app-rss` builds it), driven like the e2e tests
// (tauri-driver + WebKitWebDriver under Xvfb): open CORPUS, ask QUESTION,
// wait until no index work runs, stay idle IDLE_MS, then read /proc for the
// app process and its WebKit children (the page's web process, the network
// process). Prints one JSON line.
//
// LOUPE_APP=target/release/loupe-app CORPUS=DIR LOUPE_DATA_DIR=DATA node bench/app-rss.mjs
// A data dir that already holds CORPUS's index measures a reopen; an empty
// one measures a first open (which indexes first: minutes on a big corpus).
// OPENED_IDLE=1 also measures the app idle once the project is open,
// before the question is typed (`unasked_*`); SMAPS_OUT=PREFIX keeps the
// app's smaps at each measurement. The app's entry in `processes` lists
// the mappings holding the most of it (`by_mapping_kb`: the binary,
// `libLLVM-15.so.1`, `lexical *.term`, `[anon]`, …).

import { readFileSync, readdirSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { startApp, stopGroup, UI_TIMEOUT_MS } from '../tests/e2e/driver.mjs';

const APP = realpathSync(process.env.LOUPE_APP ?? '../target/release/loupe-app');
const CORPUS = process.env.CORPUS;
const DATA = process.env.LOUPE_DATA_DIR;
const QUESTION = process.env.QUESTION ?? 'how does serde_json parse a floating point number?';
const IDLE_MS = Number(process.env.IDLE_MS ?? 15_000);
/** A first index of the vendor corpus takes minutes. */
const INDEX_TIMEOUT_MS = 30 * 60_000;
const PORT = 4460;

if (!CORPUS || !DATA) {
  console.error('set CORPUS (a folder) and LOUPE_DATA_DIR (the data dir the app uses)');
  process.exit(2);
}

/** Every process id with its parent's. */
function processes() {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may hold spaces and parentheses: fields follow the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(entry), ppid });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The app's process id: the one running APP. */
function appPid() {
  for (const { pid } of processes()) {
    try {
      if (readlinkSync(`/proc/${pid}/exe`) === APP) return pid;
    } catch {
      // another user's, or gone
    }
  }
  throw new Error(`no process runs ${APP}`);
}

/** Name and memory (KiB) of `pid` from /proc/PID/status. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
  return {
    pid,
    name: status.match(/^Name:\s+(.*)$/m)?.[1] ?? '?',
    rss_kb: field('VmRSS'),
    anon_kb: field('RssAnon'),
    file_kb: field('RssFile'),
    peak_kb: field('VmHWM'),
  };
}

/** The app and every process under it; with SMAPS_OUT set, the app's
 * /proc/PID/smaps is copied to `${SMAPS_OUT}.${label}` (what each mapping
 * holds). */
function measure(label) {
  const root = appPid();
  if (process.env.SMAPS_OUT) {
    writeFileSync(`${process.env.SMAPS_OUT}.${label}`, readFileSync(`/proc/${root}/smaps`));
  }
  const all = processes();
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const p of all) if (p.ppid === tree[i]) tree.push(p.pid);
  }
  const measured = tree.map(memory);
  measured[0].by_mapping_kb = byMapping(root);
  return measured;
}

/** The eight mappings of `pid` that hold the most resident KiB: a file by
 * its name (the app binary, `libLLVM-15.so.1`, …), the lexical index's
 * files by kind (`lexical *.term`), or `[anon]`, `[heap]`, …, from
 * /proc/PID/smaps. */
function byMapping(pid) {
  const kb = new Map();
  let name = '[anon]';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = line.match(/^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/);
    if (header) {
      const path = header[1] || '[anon]';
      const lexical = path.match(/\/lexical\/[^/]*\.(\w+)$/);
      name = lexical ? `lexical *.${lexical[1]}` : path.slice(path.lastIndexOf('/') + 1) || path;
      continue;
    }
    const rss = line.match(/^Rss:\s+(\d+) kB/);
    if (rss) kb.set(name, (kb.get(name) ?? 0) + Number(rss[1]));
  }
  return [...kb].sort((a, b) => b[1] - a[1]).slice(0, 8);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { driver, browser } = await startApp(APP, PORT, { LOUPE_DATA_DIR: DATA });
try {
  const byId = (id) => browser.$(`[data-testid="${id}"]`);
  await (await byId('empty-state')).waitForDisplayed({ timeout: UI_TIMEOUT_MS });
  await sleep(IDLE_MS);
  const empty = measure('empty');

  const opened = Date.now();
  await (await byId('path-input')).setValue(CORPUS);
  await (await byId('open-button')).click();
  await (await byId('status-files')).waitForDisplayed({ timeout: INDEX_TIMEOUT_MS });
  // A reopen (`OPENED_IDLE=1`): what the project holds before any question,
  // once every stage is ready.
  let unasked = null;
  if (process.env.OPENED_IDLE === '1') {
    await browser.waitUntil(async () => !(await (await byId('progress')).isExisting()), {
      timeout: INDEX_TIMEOUT_MS,
      interval: 1000,
      timeoutMsg: 'the index did not finish',
    });
    await sleep(IDLE_MS);
    unasked = measure('unasked');
  }
  await (await byId('question-input')).setValue(QUESTION);
  await browser.waitUntil(async () => (await browser.$$('[data-testid="chunk-row"]')).length > 0, {
    timeout: INDEX_TIMEOUT_MS,
    timeoutMsg: 'no rows',
  });
  // Every stage landed: no progress bar, no signal still coming.
  await browser.waitUntil(
    async () =>
      !(await (await byId('progress')).isExisting()) &&
      !(await (await byId('scan-cancel')).isExisting()) &&
      !(await (await byId('signals-cancel')).isExisting()),
    { timeout: INDEX_TIMEOUT_MS, interval: 1000, timeoutMsg: 'the index did not finish' },
  );
  const ready_s = (Date.now() - opened) / 1000;
  await sleep(IDLE_MS);
  const idle = measure('idle');
  const sum = (ps, key) => ps.reduce((a, p) => a + p[key], 0);
  console.log(
    JSON.stringify({
      corpus: CORPUS,
      question: QUESTION,
      idle_ms: IDLE_MS,
      ready_s,
      empty_app_rss_kb: empty[0].rss_kb,
      empty_total_rss_kb: sum(empty, 'rss_kb'),
      unasked_app_rss_kb: unasked?.[0].rss_kb ?? null,
      unasked_app_anon_kb: unasked?.[0].anon_kb ?? null,
      app_rss_kb: idle[0].rss_kb,
      app_anon_kb: idle[0].anon_kb,
      app_peak_kb: idle[0].peak_kb,
      total_rss_kb: sum(idle, 'rss_kb'),
      total_anon_kb: sum(idle, 'anon_kb'),
      processes: idle,
    }),
  );
} finally {
  await browser.deleteSession().catch(() => {});
  await stopGroup(driver);
}
