// Starting and stopping the real app under tauri-driver + WebKitWebDriver
// (WebdriverIO), for the e2e tests and the app benchmarks (ui/bench/).

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { remote } from 'webdriverio';

/** Sessions started before giving up when the page is gone at once. */
const SESSION_ATTEMPTS = 3;
/** How long the UI may take to show what it was asked for. */
export const UI_TIMEOUT_MS = 20_000;

async function waitForDriver(port) {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/status`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('tauri-driver did not start');
}

/**
 * tauri-driver on `port` with `env` added to the environment of the app at
 * `app` (a built `loupe-app`), and a session on it (the app started). Each
 * driver gets its own process group, so `stopGroup` can stop it together
 * with WebKitWebDriver and the app: an app left running keeps the caller's
 * output pipe open, and a test runner would wait for it forever.
 */
export async function startApp(app, port, env) {
  // Its WebKitWebDriver on the next port (tauri-driver's default native
  // port, 4445, would collide with a second driver's own).
  const drv = spawn('tauri-driver', ['--port', String(port), '--native-port', String(port + 1)], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...env },
  });
  await waitForDriver(port);
  // WebKitWebDriver has once reported "page crash or hang" before the page
  // was touched: start a fresh session (a fresh app) when the first look at
  // the page fails, up to SESSION_ATTEMPTS times.
  for (let attempt = 1; ; attempt++) {
    const session = await remote({
      hostname: '127.0.0.1',
      port,
      logLevel: 'warn',
      capabilities: {
        // @ts-expect-error tauri-driver's own capabilities
        browserName: 'wry',
        'wdio:enforceWebDriverClassic': true,
        'tauri:options': { application: app },
      },
    });
    try {
      await (await session.$('body')).waitForExist({ timeout: UI_TIMEOUT_MS });
      return { driver: drv, browser: session };
    } catch (e) {
      await session.deleteSession().catch(() => {});
      if (attempt >= SESSION_ATTEMPTS) {
        stopGroup(drv);
        throw e;
      }
      console.error(`session ${attempt} failed (${e}); starting another`);
    }
  }
}

/** Signal every process of `drv`'s group; false once none is left. */
function signalGroup(drv, signal) {
  try {
    process.kill(-drv.pid, signal);
    return true;
  } catch {
    return false;
  }
}

export async function stopGroup(drv) {
  if (drv?.pid && signalGroup(drv, 'SIGTERM')) {
    for (let i = 0; i < 20 && signalGroup(drv, 0); i++) await new Promise((r) => setTimeout(r, 100));
    signalGroup(drv, 'SIGKILL');
  }
}

/** The last `lines` lines of the app's log under its data dir `dataDir`
 * (`src-tauri/src/log.rs`: warnings, errors and panics), or why there are none. */
export function appLogTail(dataDir, lines = 80) {
  const path = join(dataDir, 'logs', 'app.log');
  if (!existsSync(path)) return `(no log at ${path})`;
  return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
}

/**
 * Whether `browser`'s session still answers. When it does not, say so on
 * stderr once, with the app's processes and the tail of its log under
 * `dataDir`: WebKitWebDriver's "page crash or hang" (its connection to the
 * app is gone) tells nothing of why, and every later call only says
 * "invalid session id".
 */
export async function sessionLost(browser, dataDir) {
  if (!browser || browser.__lossReported) return Boolean(browser?.__lossReported);
  try {
    await browser.getUrl();
    return false;
  } catch (e) {
    browser.__lossReported = true;
    let processes = '';
    try {
      processes = execFileSync('ps', ['-eo', 'pid,stat,etime,rss,args'], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => /loupe-app|WebKit/.test(l))
        .join('\n');
    } catch {
      processes = '(ps failed)';
    }
    console.error(
      `the WebDriver session is gone (${e}).\napp and WebKit processes now:\n${processes || '(none)'}\n` +
        `the app's log (${dataDir}):\n${appLogTail(dataDir)}`,
    );
    return true;
  }
}
