// The page (build-wasm/web/dist) in Debian's Chromium, headless (issue 33, item 4): it trains the words GPT for 200
// steps as a user would, and fails on any page error, console error, failed request or request that leaves 127.0.0.1.
//   node web/test/page.test.mjs [--dist build-wasm/web/dist] [--native build/bin/cppgrad-gpt]
//                               [--chromium /usr/bin/chromium] [--screenshot FILE.png] [--word WORD] [--timeout SECONDS]
// It checks, in order:
//   1. the worker starts (window.cppgradPage.ready) and draws the typed word's attention: <b> and its characters;
//   2. with #lr 0.002 and #max-steps 200 (and Reset), Train runs to #step 200 and stops there; the mean of the last 20 training losses is below
//      the bigram's validation loss (#bigram), and the typed word's attention maps after step 200 differ from those
//      after init by more than ATTENTION_CHANGE somewhere;
//   3. Sample fills #samples, and clicking one shows #explain; a screenshot of the trained page is taken;
//   4. Download gives cppgrad-gpt-step200.ckpt, which native `cppgrad-gpt eval` reads as step 200 with the page's
//      validation loss at step 200 to within VAL_LOSS_BOUND;
//   5. raising #max-steps by MORE grows the finished run (train --resume --steps N), and Train goes on to it;
//   6. loading the downloaded checkpoint (after the question the MORE steps not downloaded ask) brings back step 200,
//      its config into the boxes (#lr, #max-steps, #seed) and its 200 losses into the chart and the numbers;
//   7. the graph tab draws the autograd graph of the expression and of the attention head.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { launch, openPage, serve, startOver, typeInto, waitFor } from './browser.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The 200 steps, at --lr 2e-3 typed into #lr: with cppgrad-gpt train's default 5e-4 the mean of the last 20
// training losses is 2.552 at step 200, still above the bigram's 2.519 (it passes below near step 250); at 2e-3 native
// `cppgrad-gpt train --steps 200 --lr 2e-3` ends at a validation loss of 2.465 (measured), so the check has a margin.
const STEPS = 200;
const LR = '0.002';
// Attention weights are probabilities in [0, 1]. At init the weights are small, so every row is close to uniform over
// the positions it may read (1/(i+1)); after 300 steps some weight has moved by 0.85 ('transformer', measured), so a
// map that did not follow training (unchanged, or redrawn from the init weights) fails by a wide margin.
const ATTENTION_CHANGE = 0.1;
// The page's validation loss and native eval's of the page's checkpoint: the bound the engine's equality test
// (wasm_web_same_numbers, docs/browser.md "The same numbers") states, 1e-6 relative, for its reason: the same float32
// model, but musl's libm and no FMA contraction in wasm against glibc's and FMA natively (and here also the kernels'
// 128-bit SIMD against AVX2 or AVX-512). Measured here: 6.3e-9 relative at step 300 (an AVX2 host).
const VAL_LOSS_BOUND = 1e-6;
// Steps a finished run grows by (a few seconds of training).
const MORE = 10;

function options() {
  const { values } = parseArgs({
    options: {
      dist: { type: 'string', default: join(repo, 'build-wasm', 'web', 'dist') },
      native: { type: 'string', default: process.env.CPPGRAD_GPT ?? join(repo, 'build', 'bin', 'cppgrad-gpt') },
      chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
      screenshot: { type: 'string' },
      word: { type: 'string', default: 'transformer' },
      timeout: { type: 'string', default: '600' },
    },
    strict: true,
  });
  const timeout = Number(values.timeout);
  if (!(timeout > 0)) throw new UsageError(`--timeout must be a positive number of seconds, got '${values.timeout}'`);
  if (!/^[a-z]{1,20}$/.test(values.word)) throw new UsageError(`--word must be 1 to 20 letters a-z, got '${values.word}'`);
  return { ...values, timeout };
}

class UsageError extends Error {}

const log = (what) => console.log(`page.test: ${what}`);
const check = (ok, what) => { if (!ok) throw new Error(what); };

// A snapshot of the typed word's attention (plain arrays: a Float32Array does not cross page.evaluate).
const attentionOf = (word) => {
  const a = window.cppgradPage?.attention;
  if (!a || a.word !== word || !a.maps || a.maps.length === 0) return null;
  return { word: a.word, tokens: [...a.tokens], layers: a.layers, heads: a.heads, T: a.T, maps: Array.from(a.maps) };
};

async function attentionAfterRetyping(page, errors, word) {
  // Another word first, so the one read back is a fresh map of the current weights, not the last one drawn.
  const other = word === 'a' ? 'b' : 'a';
  await typeInto(page, '#word', other);
  await waitFor(page, errors, `the attention of '${other}'`, 60, attentionOf, other);
  await typeInto(page, '#word', word);
  return waitFor(page, errors, `the attention of '${word}'`, 60, attentionOf, word);
}

async function trainTo(page, errors, steps, seconds) {
  await page.click('#train');
  const started = Date.now();
  await waitFor(page, errors, `#step = ${steps}`, seconds,
                (n) => document.querySelector('#step').textContent.trim() === String(n), steps);
  log(`trained ${steps} steps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // The validation loss of the last step follows the step itself; read it once it has stopped changing.
  let last = null;
  for (let stable = 0; stable < 10;) {
    const now = await waitFor(page, errors, `the validation loss at step ${steps}`, 60, () => {
      const p = window.cppgradPage;
      return Number.isFinite(p?.val_loss) && document.querySelector('#val-loss').textContent.trim() !== '' &&
             { val: p.val_loss, steps: p.steps_done };
    });
    stable = last && now.val === last.val && now.steps === last.steps ? stable + 1 : 0;
    last = now;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  check(last.steps === steps, `training went on past --steps: ${last.steps} steps done, expected ${steps}`);
  return last.val;
}

async function download(browser, page, errors, folder) {
  const cdp = await browser.target().createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: folder, eventsEnabled: true });
  let name = null;
  cdp.on('Browser.downloadWillBegin', (e) => { name = e.suggestedFilename; });
  let timer;
  const done = new Promise((ok, fail) => {
    cdp.on('Browser.downloadProgress', (e) => {
      if (e.state === 'completed') ok(join(folder, e.guid));
      if (e.state === 'canceled') fail(new Error('the checkpoint download was cancelled'));
    });
    timer = setTimeout(() => fail(new Error('no checkpoint downloaded within 60 s of pressing #download')), 60000);
  });
  await page.click('#download');
  const file = await done.finally(() => clearTimeout(timer));
  await cdp.detach();
  check(errors.length === 0, errors.join('; '));
  return { file, name };
}

function nativeEval(native, checkpoint, folder) {
  check(existsSync(native), `no native cppgrad-gpt at ${native}: build it (cmake -S . -B build && cmake --build build ` +
                            '--target cppgrad-gpt) or name it with --native PATH or CPPGRAD_GPT');
  const metrics = join(folder, 'eval.jsonl');
  const out = execFileSync(native, ['eval', '--checkpoint', checkpoint, '--metrics-out', metrics], { encoding: 'utf8' });
  const line = JSON.parse(readFileSync(metrics, 'utf8').trim().split('\n').pop());
  return { out: out.trim(), loss: line.loss };
}

// Draws a graph by `show()` (a click or a choice) and waits for it: a new drawing in #graph with enough boxes.
async function graphNodes(page, errors, what, show) {
  const before = await page.$eval('#graph', (svg) => svg.innerHTML);
  await show();
  // The view draws a box per node with its labels (name, op, shape, values, gradients). The expression has a few
  // nodes at least; the head has q, k, v, the scores, the mask, the softmax, the weighted sum and a loss.
  const least = what === 'head' ? 8 : 3;
  return waitFor(page, errors, `the '${what}' graph in #graph`, 60, ([least, before]) => {
    const svg = document.querySelector('#graph');
    if (svg.innerHTML === before) return null;  // still the graph drawn before
    const shapes = svg.querySelectorAll('rect, circle, ellipse, polygon').length;
    const labels = svg.querySelectorAll('text').length;
    return shapes >= least && labels >= least && { shapes, labels };
  }, [least, before]);
}

async function main() {
  const o = options();
  const scratch = mkdtempSync(join(tmpdir(), 'cppgrad-page-test-'));
  // The screenshot outlives the run (the scratch folder does not): a folder of its own unless one is named.
  const screenshot = o.screenshot ?? join(mkdtempSync(join(tmpdir(), 'cppgrad-page-screenshot-')), 'page.png');
  const errors = [];
  let server, chromium;
  try {
    server = await serve(o.dist);
    chromium = await launch({ chromium: o.chromium });
    log(`${await chromium.browser.version()}, page at ${server.origin}/`);
    const page = await openPage(chromium.browser, server.origin, errors);

    // 1. the worker is ready; the typed word's attention at init
    await waitFor(page, errors, 'window.cppgradPage.ready', 180, () => window.cppgradPage?.ready === true);
    await typeInto(page, '#lr', LR);
    await startOver(page, errors, STEPS);
    const command = await page.$eval('#command', (e) => e.textContent);
    check(command.includes(`--lr ${LR}`) && command.includes(`--steps ${STEPS}`),
          `the native command should name --lr ${LR} and --steps ${STEPS}: '${command}'`);
    await typeInto(page, '#word', o.word);
    const before = await waitFor(page, errors, `the attention of '${o.word}' at init`, 60, attentionOf, o.word);
    check(before.T === o.word.length + 1 && before.tokens.length === before.T &&
          before.tokens.slice(1).join('') === o.word,
          `the attention of '${o.word}' should read <b> and its ${o.word.length} characters, got [${before.tokens}]`);
    check(before.maps.length === before.layers * before.heads * before.T * before.T,
          `attention maps: ${before.maps.length} numbers for ${before.layers}x${before.heads} maps of ${before.T}x${before.T}`);

    // 2. STEPS steps: below the bigram, attention moved
    const valLoss = await trainTo(page, errors, STEPS, o.timeout);
    const state = await page.evaluate(() => {
      const p = window.cppgradPage;
      return { losses: p.losses.map((l) => (typeof l === 'number' ? l : l.loss)), bigram: p.bigram,
               bigramText: document.querySelector('#bigram').textContent, ms: p.ms_per_step, tps: p.tokens_per_s,
               pageErrors: [...(p.errors ?? [])] };
    });
    check(state.losses.length >= 20, `window.cppgradPage.losses has ${state.losses.length} losses after ${STEPS} steps`);
    const last20 = state.losses.slice(-20);
    const mean = last20.reduce((s, l) => s + l, 0) / last20.length;
    const bigramShown = parseFloat(state.bigramText);
    check(Number.isFinite(state.bigram) && Math.abs(bigramShown - state.bigram) < 0.01,
          `#bigram shows '${state.bigramText}', window.cppgradPage.bigram is ${state.bigram}`);
    log(`mean of the last 20 training losses ${mean.toFixed(4)}, bigram ${state.bigram.toFixed(4)}, validation ` +
        `${valLoss.toFixed(4)}; ${state.ms?.toFixed?.(1)} ms/step, ${Math.round(state.tps)} tokens/s`);
    check(mean < state.bigram, `after ${STEPS} steps the training loss (${mean}) is not below the bigram's (${state.bigram})`);
    check(valLoss < state.bigram, `after ${STEPS} steps the validation loss (${valLoss}) is not below the bigram's (${state.bigram})`);

    const after = await attentionAfterRetyping(page, errors, o.word);
    check(after.maps.length === before.maps.length, 'the attention maps changed shape during training');
    const change = Math.max(...after.maps.map((v, i) => Math.abs(v - before.maps[i])));
    log(`attention of '${o.word}': largest change ${change.toFixed(4)} (at least ${ATTENTION_CHANGE} expected)`);
    check(change > ATTENTION_CHANGE, `the attention of '${o.word}' barely moved in ${STEPS} steps: ${change}`);

    // 3. samples and their explanation, then the screenshot of the trained page
    await page.click('#sample');
    await waitFor(page, errors, 'samples in #samples', 60, () => document.querySelectorAll('#samples li').length > 0);
    await page.click('#samples li button');
    await waitFor(page, errors, '#explain shown', 30,
                  () => !document.querySelector('#explain').hidden && document.querySelectorAll('#explain tr').length > 1);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshot });
    log(`screenshot ${screenshot} (${statSync(screenshot).size} bytes)`);

    // 4. the checkpoint, natively
    const { file, name } = await download(chromium.browser, page, errors, scratch);
    check(name === `cppgrad-gpt-step${STEPS}.ckpt`, `the download is named '${name}', expected cppgrad-gpt-step${STEPS}.ckpt`);
    const native = nativeEval(o.native, file, scratch);
    log(`native: ${native.out}`);
    check(native.out.includes(`(step ${STEPS})`), `native eval does not read the checkpoint as step ${STEPS}`);
    const gap = Math.abs(native.loss - valLoss) / Math.abs(native.loss);
    log(`validation loss: page ${valLoss}, native ${native.loss}, relative difference ${gap.toExponential(2)} ` +
        `(at most ${VAL_LOSS_BOUND})`);
    check(gap <= VAL_LOSS_BOUND, `native eval's loss ${native.loss} differs from the page's ${valLoss} by ${gap} relative`);

    // 5. the finished run trains on when its steps grow
    await typeInto(page, '#max-steps', String(STEPS + MORE));
    await waitFor(page, errors, `#command naming --steps ${STEPS + MORE}`, 60,
                  (n) => document.querySelector('#command').textContent.includes(`--steps ${n}`), STEPS + MORE);
    await trainTo(page, errors, STEPS + MORE, o.timeout);

    // 6. the checkpoint of step STEPS loaded back: its step and its config in the boxes (the lr typed over first)
    const ckpt = join(scratch, name);
    copyFileSync(file, ckpt);
    await page.$eval('#lr', (e) => { e.value = '0.1'; });
    // The MORE steps trained since the download would be lost: the page asks first, and the test agrees.
    const asked = [];
    page.on('dialog', (d) => { asked.push(d.message()); d.accept(); });
    await (await page.$('#load')).uploadFile(ckpt);
    const loaded = await waitFor(page, errors, `the checkpoint loaded at step ${STEPS}`, 60, (n) => {
      const ready = window.cppgradPage?.ready && document.querySelector('#step').textContent.trim() === String(n);
      return ready && ['lr', 'max-steps', 'seed'].map((id) => document.querySelector(`#${id}`).value);
    }, STEPS);
    check(Number(loaded[0]) === Number(LR) && loaded[1] === String(STEPS) && loaded[2] === '0',
          `after loading the checkpoint the boxes show lr ${loaded[0]}, steps ${loaded[1]}, seed ${loaded[2]}; ` +
          `expected its config: ${LR}, ${STEPS}, 0`);
    check(asked.length === 1 && asked[0].includes(`${MORE} steps`),
          `loading over ${MORE} steps not downloaded asked ${JSON.stringify(asked)}`);
    // Its losses come with it (the page keeps them in the checkpoint): the chart and the numbers show them.
    const history = await page.evaluate(() => ({ losses: window.cppgradPage.losses.length, chart: window.cppgradPage.chart,
                                                 val: document.querySelector('#val-loss').textContent }));
    check(history.losses === STEPS && history.chart?.x?.[0] === 0 && history.val === valLoss.toFixed(4),
          `the loaded checkpoint shows ${history.losses} losses, chart ${JSON.stringify(history.chart)}, ` +
          `validation '${history.val}'; expected ${STEPS} losses from step 0 and ${valLoss.toFixed(4)}`);
    log(`loaded ${name} back: step ${STEPS}, lr ${loaded[0]}, steps ${loaded[1]}, ${history.losses} losses`);

    // 7. the autograd graphs
    check(await page.$eval('#graph-what', (s) => s.value) === 'expression', 'the graph tab should open on the expression');
    for (const [what, show] of [['expression', () => page.click('#tab-graph')],
                                ['head', () => page.select('#graph-what', 'head')]]) {
      const g = await graphNodes(page, errors, what, show);
      log(`graph '${what}': ${g.shapes} shapes, ${g.labels} labels`);
    }
    const pageErrors = await page.evaluate(() => [...(window.cppgradPage.errors ?? [])]);
    check(pageErrors.length === 0, `window.cppgradPage.errors: ${pageErrors.join('; ')}`);
    check(errors.length === 0, errors.join('; '));
  } finally {
    await chromium?.close();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(() => {
  console.log('1 passed, 0 failed');
}, (e) => {
  if (e instanceof UsageError) {
    console.error(`page.test: ${e.message}`);
    process.exit(2);
  }
  console.error(`page.test: FAILED: ${e.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
