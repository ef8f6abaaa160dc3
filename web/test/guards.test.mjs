// The page keeps what it refuses out of the run (issue 40): each case as a user meets it, in Debian's Chromium,
// headless, failing on any uncaught exception, console error or failed request as page.test.mjs does.
//   node web/test/guards.test.mjs [--dist build-wasm/web/dist] [--chromium /usr/bin/chromium]
// It checks, in order:
//   1. a phone (390 x 844): the page does not scroll sideways, the attention maps scroll in their own box, and a
//      sample's table is as wide as its panel;
//   2. the number boxes refuse 'abc', -1, 0 and 1e9 as a learning rate (and bad steps and seeds) beside the box, with
//      Train and Reset off and the run as it was; a good value clears the message and restarts the run;
//   3. a dropped binary file is refused, and the worker's data stays the word list: the Data box says so, and
//      "read it as" text, then Reset, train on the words;
//   4. an error clears on the next success of the same kind (a refused word, then a good one);
//   5. the evaluation at the last step says it is evaluating while it runs;
//   6. trained steps are not thrown away unasked: Reset, "read it as", a dropped text and a reload each ask first
//      (dismissed, the run stays); downloaded, they go without a question;
//   7. a checkpoint loaded back brings its losses (the chart and the numbers), the Data box names its data (not the
//      text dropped before), and training on extends its axis;
//   8. a checkpoint whose weights overflow: the maps and samples say why they are empty, Train says the run diverged,
//      the checkpoint is not downloaded, and Reset brings back a working run;
//   9. "products in" bfloat16 starts the run again as --dtype bfloat16, and it trains;
//   and no error the page showed names a command-line flag.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { launch, openPage, serve, startOver, typeInto, waitFor } from './browser.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const log = (what) => console.log(`guards.test: ${what}`);
const check = (ok, what) => { if (!ok) throw new Error(what); };
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
// A short run: its last step evaluates (eval_every 500 is more), which takes seconds on the whole validation split.
const STEPS = 30;

const snapshot = (p) => p.evaluate(() => window.cppgradPage);
const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
const stepsDone = async (page) => (await snapshot(page)).steps_done;

// A file dropped on #drop as a user's drag and drop delivers it.
async function dropFile(page, name, bytes) {
  await page.evaluate(([name, data]) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([new Uint8Array(data)], name));
    document.querySelector('#drop').dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true,
                                                                          cancelable: true }));
  }, [name, Array.from(bytes)]);
}

// Every dialog the page opens, answered as `answer` says at that moment ('dismiss' or 'accept').
function dialogs(page) {
  const seen = { list: [], answer: 'dismiss' };
  page.on('dialog', async (d) => {
    seen.list.push({ type: d.type(), message: d.message() });
    await (seen.answer === 'accept' ? d.accept() : d.dismiss());
  });
  return seen;
}

async function asks(page, seen, what, act) {
  const before = seen.list.length;
  await act();
  for (let i = 0; i < 50 && seen.list.length === before; i++) await sleep(100);
  check(seen.list.length === before + 1, `${what} threw away trained steps without asking`);
  return seen.list[seen.list.length - 1];
}

// The page's run config as the worker gave it: the native command.
const command = (page) => text(page, '#command');

async function readyAt(page, errors, steps, what) {
  return waitFor(page, errors, what, 180, (n) => window.cppgradPage.ready && window.cppgradPage.steps_done === n &&
                 !document.querySelector('#reset').disabled, steps);
}

// 1. ---------------------------------------------------------------------------------------------------------------
async function phone(page, errors) {
  await page.setViewport({ width: 390, height: 844 });
  await typeInto(page, '#word', 'transformer');
  await waitFor(page, errors, "the attention of 'transformer'", 60,
                () => window.cppgradPage.attention?.word === 'transformer');
  await page.click('#sample');
  await waitFor(page, errors, 'samples', 60, () => document.querySelectorAll('#samples li').length > 0);
  await page.click('#samples li button');
  await waitFor(page, errors, '#explain shown', 30, () => !document.querySelector('#explain').hidden);
  const m = await page.evaluate(() => {
    const box = (s) => document.querySelector(s).getBoundingClientRect();
    const att = document.querySelector('#attention');
    return { scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth,
             attRight: box('#attention').right, attScroll: att.scrollWidth, attClient: att.clientWidth,
             attOverflow: getComputedStyle(att).overflowX, explain: box('#explain').width,
             panel: document.querySelector('.samples-panel').clientWidth };
  });
  log(`390 px: page ${m.scroll} px wide in ${m.inner}; maps ${m.attScroll} px in a box of ${m.attClient} ` +
      `(overflow-x ${m.attOverflow}); table ${Math.round(m.explain)} px of a ${m.panel} px panel`);
  check(m.scroll <= m.inner, `at 390 px the page scrolls sideways: ${m.scroll} px wide in ${m.inner}`);
  check(m.attRight <= m.inner && (m.attScroll <= m.attClient || ['auto', 'scroll'].includes(m.attOverflow)),
        'at 390 px the attention maps overflow their box');
  check(m.explain >= 0.8 * (m.panel - 24), `at 390 px the sample's table is squeezed to ${m.explain} px`);
  await page.setViewport({ width: 1400, height: 1000 });
}

// 2. ---------------------------------------------------------------------------------------------------------------
async function boxes(page, errors) {
  for (const [id, values, good, flag] of [['lr', ['abc', '-1', '0', '1e9'], '0.001', '--lr 0.001'],
                                          ['max-steps', ['abc', '0', '1.5'], String(STEPS), `--steps ${STEPS}`],
                                          ['seed', ['-1', 'x'], '3', '--seed 3']]) {
    const runBefore = await command(page);
    for (const v of values) {
      await typeInto(page, `#${id}`, v);
      const shown = await page.evaluate((id) => ({
        message: document.querySelector(`#${id}-error`).textContent, hidden: document.querySelector(`#${id}-error`).hidden,
        invalid: document.querySelector(`#${id}`).getAttribute('aria-invalid'), value: document.querySelector(`#${id}`).value,
        train: document.querySelector('#train').disabled, reset: document.querySelector('#reset').disabled }), id);
      check(!shown.hidden && shown.message.includes('refused') && shown.invalid === 'true',
            `#${id} = '${v}' is not refused beside the box: ${JSON.stringify(shown)}`);
      check(shown.value === v, `#${id} = '${v}' was replaced by '${shown.value}'`);
      check(shown.train && shown.reset, `#${id} = '${v}': Train or Reset can still start a run from it`);
      await page.click('#train');  // disabled: nothing happens
      await sleep(200);
      check(await stepsDone(page) === 0 && await command(page) === runBefore,
            `#${id} = '${v}' changed the run: ${await command(page)}`);
      if (v === values[0]) log(`#${id} '${v}': ${shown.message}`);
    }
    // A good value: the message goes, and (no step done yet) the run starts again from it.
    await typeInto(page, `#${id}`, good);
    check(await page.$eval(`#${id}-error`, (e) => e.hidden), `#${id} = '${good}' still shows a refusal`);
    await waitFor(page, errors, `the run of #${id} = ${good}`, 60, (flag) => window.cppgradPage.ready &&
                  document.querySelector('#command').textContent.includes(flag), flag);
  }
}

// 3. ---------------------------------------------------------------------------------------------------------------
async function binaryDrop(page, errors) {
  // Bytes with a line break every 4,000: read as lines, each line is a sequence the model's context must hold, more
  // than the trainer takes (a program's few line breaks do the same); read as text, they would train.
  const bytes = Buffer.from(Array.from({ length: 20000 }, (_, i) => (i % 4000 === 3999 ? 10 : (i * 37 + 11) % 256))
    .map((b, i) => (b === 10 && i % 4000 !== 3999 ? 0 : b)));
  const errorsBefore = (await snapshot(page)).errors.length;
  await dropFile(page, 'program.bin', bytes);
  await waitFor(page, errors, 'the binary file refused', 60, (n) => window.cppgradPage.errors.length > n, errorsBefore);
  const refusal = (await snapshot(page)).errors.pop();
  log(`dropped program.bin: ${refusal}`);
  check(await text(page, '#data-name') === 'words.txt (wamerican)', 'after a refused drop the Data box names ' +
        await text(page, '#data-name'));
  check(await page.$eval('#status', (e) => e.classList.contains('error')), 'the refusal is not shown as an error');
  // "read it as" text: a new run on the worker's data, which must still be the word list.
  await page.select('#format', 'text');
  await waitFor(page, errors, 'the run reading the words as text', 60,
                () => window.cppgradPage.ready && document.querySelector('#command').textContent.includes('--format text'));
  const cmd = await command(page);
  check(!cmd.includes('program.bin') && !cmd.includes('--data'), `"read it as" text trains on another file: ${cmd}`);
  check(await text(page, '#data-name') === 'words.txt (wamerican)', 'the Data box changed');
  check(!(await page.$eval('#status', (e) => e.classList.contains('error'))), 'the refusal stays after a new run');
  await page.select('#format', 'lines');
  await waitFor(page, errors, 'the run reading lines again', 60,
                () => window.cppgradPage.ready && !document.querySelector('#command').textContent.includes('--format'));
  await page.click('#reset');
  await readyAt(page, errors, 0, 'a run after Reset');
  check(!(await command(page)).includes('program.bin'), 'Reset trains on the refused file');
}

// 4. ---------------------------------------------------------------------------------------------------------------
async function errorsClear(page, errors) {
  await typeInto(page, '#word', 'a#b');  // '#' is no character of the word list
  await waitFor(page, errors, 'the refused word', 30, () => document.querySelector('#status').classList.contains('error') &&
                document.querySelector('#attention-note').textContent !== '');
  log(`word 'a#b': ${await text(page, '#status')}`);
  await typeInto(page, '#word', 'hello');
  await waitFor(page, errors, 'the error cleared by the next word', 30, () => window.cppgradPage.attention?.word === 'hello' &&
                !document.querySelector('#status').classList.contains('error') &&
                document.querySelector('#attention-note').textContent === '');
}

// 5. ---------------------------------------------------------------------------------------------------------------
async function evaluationSaysSo(page, errors) {
  await page.evaluate(() => {
    window.statusLog = [];
    const status = document.querySelector('#status'), val = document.querySelector('#val-loss');
    new MutationObserver(() => window.statusLog.push(`${status.textContent} | ${val.textContent}`))
      .observe(document.querySelector('main').parentElement, { childList: true, characterData: true, subtree: true });
  });
  await page.click('#train');
  await waitFor(page, errors, `step ${STEPS} and its evaluation`, 300, (n) => window.cppgradPage.steps_done === n &&
                window.cppgradPage.val_loss !== null && document.querySelector('#train').textContent === 'Train', STEPS);
  const said = await page.evaluate(() => window.statusLog.filter((s) => s.startsWith('Evaluating')));
  check(said.length > 0 && said[0].includes(`step ${STEPS}`) && said[0].includes('evaluating'),
        `no notice while the evaluation at step ${STEPS} ran`);
  log(`while evaluating: '${said[0]}'`);
}

// 6. ---------------------------------------------------------------------------------------------------------------
async function asksFirst(page, errors, seen) {
  seen.answer = 'dismiss';
  const reset = await asks(page, seen, 'Reset', () => page.click('#reset'));
  check(reset.type === 'confirm' && reset.message.includes(`${STEPS} steps`), `Reset asked: ${JSON.stringify(reset)}`);
  log(`Reset asks: '${reset.message}'`);
  await asks(page, seen, '"read it as"', () => page.select('#format', 'text'));
  check(await page.$eval('#format', (s) => s.value) === 'lines', '"read it as" stays text after the user said no');
  await asks(page, seen, 'a dropped text', () => dropFile(page, 'few.txt', Buffer.from('abc\nabd\nbcd\n')));
  const reload = await asks(page, seen, 'a reload', () => page.reload({ timeout: 3000 }).catch(() => {}));
  check(reload.type === 'beforeunload', `a reload asked with a ${reload.type} dialog`);
  await sleep(500);
  check(await stepsDone(page) === STEPS && (await snapshot(page)).val_loss !== null, 'a question said no to lost the run');
}

// 7. ---------------------------------------------------------------------------------------------------------------
// Presses Download and resolves with the file, or with null if none began within `seconds`.
async function download(browser, page, folder, seconds = 60) {
  const cdp = await browser.target().createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: folder, eventsEnabled: true });
  let timer, began = false;
  const done = new Promise((ok, fail) => {
    cdp.on('Browser.downloadWillBegin', () => { began = true; });
    cdp.on('Browser.downloadProgress', (e) => {
      if (e.state === 'completed') ok(join(folder, e.guid));
      if (e.state === 'canceled') fail(new Error('the download was cancelled'));
    });
    timer = setTimeout(() => (began ? fail(new Error(`the download did not finish in ${seconds} s`)) : ok(null)),
                       seconds * 1000);
  });
  await page.click('#download');
  try {
    return await done;
  } finally {
    clearTimeout(timer);
    await cdp.detach();
  }
}

async function checkpointHistory(browser, page, errors, seen, scratch) {
  const valAt30 = (await snapshot(page)).val_loss;
  const ckpt = join(scratch, `step${STEPS}.ckpt`);
  const file = await download(browser, page, scratch);
  check(file !== null, 'Download gave no file');
  copyFileSync(file, ckpt);
  // Downloaded: a new text replaces the run without a question.
  const asked = seen.list.length;
  await dropFile(page, 'few.txt', Buffer.from('abc\nabd\nbcd\ncab\ndab\n'.repeat(20)));
  await waitFor(page, errors, 'the run on few.txt', 60, () => window.cppgradPage.ready &&
                document.querySelector('#data-name').textContent.startsWith('few.txt'));
  check(seen.list.length === asked, 'the page asked before replacing a run already downloaded');
  await startOver(page, errors, 5);
  await page.click('#train');
  await waitFor(page, errors, '5 steps on few.txt', 120, () => window.cppgradPage.steps_done === 5 &&
                document.querySelector('#train').textContent === 'Train');
  // Loading asks first; said no, the run on few.txt stays.
  await asks(page, seen, 'loading a checkpoint', async () => (await page.$('#load')).uploadFile(ckpt));
  await sleep(500);
  check(await stepsDone(page) === 5, 'a checkpoint loaded after the user said no');
  seen.answer = 'accept';
  await (await page.$('#load')).uploadFile(ckpt);
  await readyAt(page, errors, STEPS, `the checkpoint at step ${STEPS}`);
  seen.answer = 'dismiss';
  const p = await snapshot(page);
  const shown = { data: await text(page, '#data-name'), loss: await text(page, '#loss'), val: await text(page, '#val-loss') };
  log(`loaded: ${p.losses.length} losses, validation ${shown.val}, chart ${JSON.stringify(p.chart)}, data ${shown.data}`);
  check(shown.data === 'words.txt (wamerican)', `the Data box names ${shown.data}, not the checkpoint's words`);
  check(p.losses.length === STEPS && p.loss_steps[0] === 1 && p.loss_steps[STEPS - 1] === STEPS,
        `the checkpoint brought ${p.losses.length} losses, not its ${STEPS}`);
  check(p.vals.length === 1 && p.vals[0][0] === STEPS && p.val_loss === valAt30,
        `the checkpoint's evaluation: ${JSON.stringify(p.vals)}, expected [${STEPS}, ${valAt30}]`);
  check(shown.loss === p.losses[STEPS - 1].toFixed(4) && shown.val === valAt30.toFixed(4),
        `the numbers show loss '${shown.loss}', validation '${shown.val}'`);
  check(p.chart?.x?.[0] === 0 && p.chart.points === STEPS + 1, `the chart drew ${JSON.stringify(p.chart)}`);
  // Training on: the axis keeps the history from step 0 and grows to the new steps.
  await typeInto(page, '#max-steps', String(STEPS + 5));
  await waitFor(page, errors, 'the run grown', 30, (n) => document.querySelector('#steps-total').textContent === String(n),
                STEPS + 5);
  await page.click('#train');
  await waitFor(page, errors, `step ${STEPS + 5}`, 120, (n) => window.cppgradPage.steps_done === n &&
                document.querySelector('#train').textContent === 'Train', STEPS + 5);
  const q = await snapshot(page);
  check(q.losses.length === STEPS + 5 && q.chart.x[0] === 0 && q.chart.x[1] >= STEPS + 5,
        `trained on: ${q.losses.length} losses, axis ${JSON.stringify(q.chart.x)}`);
  return ckpt;
}

// 8. ---------------------------------------------------------------------------------------------------------------
// The checkpoint with one layer's weights at 3e38: finite, so it loads, but the layer's products overflow to Inf and
// the numbers after them to NaN, as in a run whose learning rate blew its weights up.
function overflowing(file, out) {
  const bytes = readFileSync(file);
  const n = Number(bytes.readBigUInt64LE(0));
  const tensor = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'))['model.transformer.h.0.mlp.c_fc.weight'];
  check(tensor?.dtype === 'F32', 'the checkpoint has no float32 model.transformer.h.0.mlp.c_fc.weight');
  for (let i = 8 + n + tensor.data_offsets[0]; i < 8 + n + tensor.data_offsets[1]; i += 4) bytes.writeFloatLE(3e38, i);
  writeFileSync(out, bytes);
  return out;
}

async function diverged(browser, page, errors, seen, ckpt, scratch) {
  seen.answer = 'accept';  // the 5 steps trained on are not kept
  await (await page.$('#load')).uploadFile(overflowing(ckpt, join(scratch, 'overflowing.ckpt')));
  await readyAt(page, errors, STEPS, 'the overflowing checkpoint');
  seen.answer = 'dismiss';
  await waitFor(page, errors, 'the maps saying why they are empty', 30, () =>
    document.querySelector('#attention-note').textContent.includes('not finite') &&
    document.querySelectorAll('#attention canvas').length === 0);
  await page.click('#sample');
  await waitFor(page, errors, 'the samples saying why they are empty', 30, () =>
    document.querySelector('#samples-note').textContent.includes('not finite') &&
    document.querySelectorAll('#samples li').length === 0);
  log(`maps: '${await text(page, '#attention-note')}'`);
  log(`samples: '${await text(page, '#samples-note')}'`);
  await typeInto(page, '#max-steps', String(STEPS + 5));  // the checkpoint's run is finished: it grows first
  await waitFor(page, errors, 'the run grown', 30, (n) => document.querySelector('#steps-total').textContent === String(n),
                STEPS + 5);
  await page.click('#train');
  await waitFor(page, errors, 'the run diverged', 30, () => window.cppgradPage.diverged !== null &&
                document.querySelector('#train').disabled);
  log(`train: '${await text(page, '#status')}'`);
  check((await text(page, '#loss')) === 'diverged', 'the numbers do not say the run diverged');
  // Download: refused with the reason, no file.
  const errorsBefore = (await snapshot(page)).errors.length;
  check(await download(browser, page, scratch, 5) === null, 'the diverged model downloaded');
  await waitFor(page, errors, 'the download refused', 30, (n) => window.cppgradPage.errors.length > n, errorsBefore);
  log(`download: '${(await snapshot(page)).errors.pop()}'`);
  check(seen.list.length === 7, `${seen.list.length} questions so far, expected 7 (Reset after divergence asks none)`);
  await page.click('#reset');
  await readyAt(page, errors, 0, 'a new run after Reset');
  await waitFor(page, errors, 'the maps of the new run', 60, () => document.querySelectorAll('#attention canvas').length > 0 &&
                document.querySelector('#attention-note').textContent === '' &&
                !document.querySelector('#status').classList.contains('error') && !document.querySelector('#train').disabled);
}

// 9. ---------------------------------------------------------------------------------------------------------------
// "products in" is the run's --dtype: with no step done, bfloat16 starts the run again in it (the portable kernel,
// which gives a CPU's bits: tests/web/test_session.cpp), and it trains: its losses are finite and fall.
async function bfloat16(page, errors) {
  await page.select('#dtype', 'bfloat16');
  await waitFor(page, errors, 'the run in bfloat16', 60, () => window.cppgradPage.ready &&
                document.querySelector('#command').textContent.includes('--dtype bfloat16'));
  await page.click('#train');
  await waitFor(page, errors, '20 steps in bfloat16', 120, () => window.cppgradPage.steps_done >= 20);
  await page.click('#train');  // pauses
  const losses = (await snapshot(page)).losses;
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const first = mean(losses.slice(0, 5)), last = mean(losses.slice(-5));
  log(`bfloat16: ${await command(page)}; mean loss of the first 5 steps ${first.toFixed(3)}, last 5 ${last.toFixed(3)}`);
  check(losses.every(Number.isFinite) && last < first, `bfloat16's losses do not fall: ${losses.join(', ')}`);
}

async function main() {
  const { values: o } = parseArgs({
    options: { dist: { type: 'string', default: join(repo, 'build-wasm', 'web', 'dist') },
               chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' } },
    strict: true,
  });
  const scratch = mkdtempSync(join(tmpdir(), 'cppgrad-guards-test-'));
  const errors = [];
  let server, chromium;
  try {
    server = await serve(o.dist);
    chromium = await launch({ chromium: o.chromium });
    const page = await openPage(chromium.browser, server.origin, errors);
    const seen = dialogs(page);
    await waitFor(page, errors, 'window.cppgradPage.ready', 180, () => window.cppgradPage?.ready === true);
    await phone(page, errors);
    await boxes(page, errors);
    await binaryDrop(page, errors);
    await errorsClear(page, errors);
    await evaluationSaysSo(page, errors);
    await asksFirst(page, errors, seen);
    const ckpt = await checkpointHistory(chromium.browser, page, errors, seen, scratch);
    await diverged(chromium.browser, page, errors, seen, ckpt, scratch);
    await bfloat16(page, errors);
    const shown = (await snapshot(page)).errors;
    const flags = shown.filter((m) => /(^|\s)--[a-z]/.test(m));
    check(flags.length === 0, `errors that name command-line flags: ${flags.join(' | ')}`);
    check(errors.length === 0, errors.join('; '));
  } finally {
    await chromium?.close();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(() => console.log('1 passed, 0 failed'), (e) => {
  console.error(`guards.test: FAILED: ${e.message}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
