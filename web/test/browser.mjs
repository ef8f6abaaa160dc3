// What the page's test (page.test.mjs) and the speed measurement (speed.mjs) share: the page (build-wasm/web/dist)
// served by `python3 -m http.server` on 127.0.0.1, Debian's Chromium started headless by puppeteer-core with a profile of its
// own, and a page opened with every error it can report collected: uncaught exceptions (the page's and the worker's),
// console errors, failed requests, responses of 400 and above, and any request that is not to the local server.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';

// Loaded lazily so that a missing `npm ci` is one clear line, not a module-resolution trace.
async function loadPuppeteer() {
  try {
    return (await import('puppeteer-core')).default;
  } catch (e) {
    throw new Error(`puppeteer-core is not installed in web/test/node_modules (${e.code ?? e.message}): ` +
                    'run `npm ci --prefix web/test` (or bash .ci/install-deps.sh --web)');
  }
}

// Serves `dir` on 127.0.0.1 at a port the system picks (port 0: no race with other servers); resolves once the
// server has said where it listens. Returns {origin, stop()}.
export async function serve(dir) {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new Error(`${resolve(dir)}/index.html does not exist: build the page first ` +
                    '(cmake --preset wasm && cmake --build --preset wasm --target web_dist)');
  }
  const server = spawn('python3', ['-u', '-m', 'http.server', '-d', dir, '-b', '127.0.0.1', '0'],
                       { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  const origin = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`python3 -m http.server said nothing in 20 s: ${said}`)), 20000);
    const listen = (chunk) => {
      said += chunk;
      const m = said.match(/port (\d+)/);
      if (m) { clearTimeout(timer); ok(`http://127.0.0.1:${m[1]}`); }
    };
    server.stdout.on('data', listen);
    server.stderr.on('data', (chunk) => { said += chunk; });  // its request log; kept for a failure's message
    server.on('exit', (code) => { clearTimeout(timer); fail(new Error(`python3 -m http.server exited (${code}): ${said}`)); });
  });
  server.stdout.removeAllListeners('data');
  server.stderr.removeAllListeners('data');
  server.stdout.resume(), server.stderr.resume();
  return {
    origin,
    async stop() {
      if (server.exitCode !== null) return;
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      await exited;
    },
  };
}

// Chromium's flags: headless, no sandbox (CI runs as root), nothing fetched in the background, and every host but
// 127.0.0.1 resolving to nothing, so a request that leaves the machine fails (and is reported) instead of leaking.
const CHROMIUM_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
                       '--no-default-browser-check', '--disable-background-networking', '--disable-extensions',
                       '--disable-sync', '--disable-component-update', '--disable-default-apps', '--mute-audio',
                       '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'];

// Starts Chromium with a profile in a temporary folder; close() ends it and removes the folder.
export async function launch({ chromium, width = 1400, height = 1000 }) {
  if (!existsSync(chromium)) {
    throw new Error(`no Chromium at ${chromium}: apt-get install chromium (or bash .ci/install-deps.sh --web), ` +
                    'or name another with --chromium PATH');
  }
  const puppeteer = await loadPuppeteer();
  const profile = mkdtempSync(join(tmpdir(), 'cppgrad-chromium-'));
  let browser;
  try {
    browser = await puppeteer.launch({
      executablePath: chromium, headless: true, userDataDir: profile, args: CHROMIUM_ARGS,
      defaultViewport: { width, height }, protocolTimeout: 600000,
    });
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  return {
    browser,
    async close() {
      try { await browser.close(); } finally { rmSync(profile, { recursive: true, force: true }); }
    },
  };
}

// Opens `origin`/ in a new tab and collects every error into `errors` (strings), from the page and its workers.
// Requests to data: and blob: URLs are the page's own; anything else must go to `origin`.
export async function openPage(browser, origin, errors) {
  const page = await browser.newPage();
  const local = (url) => url.startsWith(origin + '/') || url.startsWith('data:') || url.startsWith('blob:');
  page.on('pageerror', (e) => errors.push(`page error: ${e.message ?? e}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()} (${m.location()?.url ?? ''})`);
  });
  page.on('request', (r) => {
    if (!local(r.url())) errors.push(`a request that is not to the local server: ${r.url()}`);
  });
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}: ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  await page.goto(origin + '/', { waitUntil: 'load', timeout: 60000 });
  return page;
}

// Waits until `predicate` (run in the page, with `arg`) returns a truthy value and returns it; fails after
// `seconds` saying `what`, or at once when an error was collected.
export async function waitFor(page, errors, what, seconds, predicate, arg) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (errors.length) throw new Error(`while waiting for ${what}: ${errors.join('; ')}`);
    const value = await page.evaluate(predicate, arg);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

// Replaces an input's text as a user would (select all, type), then leaves it (Tab) so its change event fires.
export async function typeInto(page, selector, text) {
  await page.click(selector, { clickCount: 3 });
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await page.type(selector, text);
  await page.keyboard.press('Tab');
}

// #max-steps is the run's --steps. Before the first step the page starts the run over by itself when it changes;
// after it, a new value takes effect at Reset. Either way the new run starts from the seed in #seed. Resolves once
// the run of `steps` steps is ready to train.
export async function startOver(page, errors, steps) {
  const readyFor = (n) => window.cppgradPage.ready && window.cppgradPage.steps_done === 0 &&
    !document.querySelector('#train').disabled && document.querySelector('#steps-total').textContent.trim() === String(n);
  await typeInto(page, '#max-steps', String(steps));
  try {
    await waitFor(page, errors, `the page to start a run of ${steps} steps`, 10, readyFor, steps);
  } catch (e) {
    if (errors.length) throw e;
    await page.click('#reset');
    await waitFor(page, errors, `a new run of ${steps} steps after Reset`, 180, readyFor, steps);
  }
}
