// The page's numbers against native cppgrad-gpt's (docs/browser.md, "The same numbers"): the module the page loads
// (cppgrad_web.js / .wasm), driven under node through the PageSession calls web/worker.js makes, trains the words
// config in reference mode for kSteps steps; native `cppgrad-gpt train` (CPPGRAD_REFERENCE=1, --threads 1) trains the
// same config with --metrics-out. Then native `cppgrad-gpt eval` reads the checkpoint the module saved. Compared:
//   - the training losses: native metrics give, every kEvery steps, the mean of the steps since the previous line
//     (a line per step would cost an evaluation of the whole validation split per step: minutes in reference mode);
//     the page's per-step losses are summed the same way, in the same order, in doubles;
//   - every one of the first kSteps losses, step by step, on the first kFewLines lines of the word list (a small
//     validation split, so native can evaluate after every step: its metrics' train_loss is then one step's loss);
//   - the validation loss at the last step, and native eval's loss for the page's checkpoint.
// Fails on any difference beyond kBound, and checks that the comparison sees another seed's losses as different.
//
//   node same_numbers.js MODULE_JS NATIVE_BIN_DIR WORDS_FILE SCRATCH_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const {failer, loadModule, nativeProgram} = require('./native_side.js');

const [moduleJs, nativeBin, wordsFile, scratch] = process.argv.slice(2);
const kSeed = 5, kSteps = 50, kEvery = 10, kFewLines = 2000;
// The bound, relative: 1e-6, about eight float32 ulps (2^-23 each). Not bit for bit: the first step's loss already
// differs in its last bit, from the same initial weights. The builds run the same reference loops but not the same C
// library (musl's expf, logf, erff in wasm, glibc's natively), nor the same contraction of a*b + c into one FMA (wasm
// has none); which operation moves a given step was not isolated. Such differences move the weights by rounding
// errors, which the next steps carry along. Measured (seed 5, 50 steps, 2026-11-28): the means of 10 steps' losses
// differ by at most 1.3e-8 relative (5e-8 absolute), a single step's loss by 5.7e-8, the validation loss by 6.7e-9;
// the weights after 50 steps by rounding errors (2.6e-6 at most, on values up to 1); another seed's losses by 1e-2.
const kBound = 1e-6;

const fail = failer('same_numbers');
const nativeAnyMode = nativeProgram(nativeBin, fail);
if (!fs.existsSync(wordsFile)) fail(`${wordsFile} is missing: sudo apt-get install wamerican`);
fs.mkdirSync(scratch, {recursive: true});

const native = (args) => nativeAnyMode(args, {...process.env, CPPGRAD_REFERENCE: '1'});

function readJsonLines(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

// Native metrics: the mean training loss of each interval of `every` steps, and the validation loss at its end.
function nativeRun(seed, steps, every, data = []) {
  const metrics = path.join(scratch, `native-seed${seed}-every${every}.jsonl`);
  native(['train', '--seed', String(seed), '--steps', String(steps), '--eval-every', String(every), '--threads', '1',
          '--samples', '0', '--quiet', '--metrics-out', metrics, ...data]);
  const evals = readJsonLines(metrics).filter((l) => l.event !== 'final');
  return {means: evals.map((e) => e.train_loss), val: evals.map((e) => e.val_loss)};
}

// The page's per-step losses as the trainer's metrics average them: summed in order from 0, divided by the count.
function intervalMeans(losses, every) {
  const out = [];
  for (let start = 0; start < losses.length; start += every) {
    let sum = 0;
    const part = losses.slice(start, start + every);
    for (const l of part) sum += l;
    out.push(sum / part.length);
  }
  return out;
}

// The indices where two series differ by more than kBound (relative to the native value), and a length mismatch.
function differences(page, nat) {
  const out = [];
  if (page.length !== nat.length) out.push(`${page.length} values against ${nat.length}`);
  for (let i = 0; i < Math.min(page.length, nat.length); ++i) {
    const d = Math.abs(page[i] - nat[i]);
    if (!(d <= kBound * Math.abs(nat[i]))) out.push(`#${i + 1}: page ${page[i]}, native ${nat[i]} (${d})`);
  }
  return out;
}

async function main() {
  const module = await loadModule(moduleJs, {preRun: [(m) => { m.ENV.CPPGRAD_REFERENCE = '1'; }]});
  module.FS.mkdirTree(path.dirname(module.defaultData));  // the page's path for the word list: cppgrad-gpt's default
  module.FS.writeFile(module.defaultData, fs.readFileSync(wordsFile));
  const page = new module.PageSession();
  const check = (r) => {
    if (r && r.error !== undefined) fail(`the module refused: ${r.error}`);
    return r;
  };
  const t0 = Date.now();
  check(page.init(JSON.stringify({seed: kSeed, steps: kSteps, eval_every: kSteps})));
  const losses = [], evals = [];
  for (let done = false; !done;) {  // in chunks, as the worker trains
    const r = check(page.train(7));
    losses.push(...r.steps.map((s) => s.loss));
    evals.push(...r.evals);
    done = r.done;
  }
  const pageSeconds = (Date.now() - t0) / 1000;
  check(page.save('/page.ckpt'));

  // Step by step, on a few lines: the page's losses against native's train_loss after every step.
  const fewText = fs.readFileSync(wordsFile, 'utf8').split('\n').slice(0, kFewLines).join('\n') + '\n';
  const fewFile = path.join(scratch, 'few_words.txt');
  fs.writeFileSync(fewFile, fewText);
  module.FS.mkdirTree(module.droppedDir);
  module.FS.writeFile(module.droppedDir + 'few_words.txt', fewText);
  const few = new module.PageSession();
  check(few.init(JSON.stringify({seed: kSeed, steps: kSteps, eval_every: 1, data: module.droppedDir + 'few_words.txt'})));
  const fewLosses = [];
  for (let done = false; !done;) {
    const r = check(few.train(7));
    fewLosses.push(...r.steps.map((s) => s.loss));
    done = r.done;
  }
  const fewNative = nativeRun(kSeed, kSteps, 1, ['--data', fewFile]).means;  // a mean of one step: its loss
  const stepDiffs = differences(fewLosses, fewNative);
  if (stepDiffs.length)
    fail(`the page's losses step by step (${kFewLines} words) differ from native cppgrad-gpt train's:\n  ` +
         stepDiffs.join('\n  '));
  const ckpt = path.join(scratch, 'page.ckpt');
  fs.writeFileSync(ckpt, module.FS.readFile('/page.ckpt'));

  const t1 = Date.now();
  const nat = nativeRun(kSeed, kSteps, kEvery);
  const nativeSeconds = (Date.now() - t1) / 1000;
  if (losses.length !== kSteps) fail(`the page trained ${losses.length} steps, not ${kSteps}`);
  const lossDiffs = differences(intervalMeans(losses, kEvery), nat.means);
  if (lossDiffs.length)
    fail(`the page's training losses (means of ${kEvery} steps) differ from native cppgrad-gpt train's:\n  ` +
         lossDiffs.join('\n  '));
  if (evals.length !== 1 || evals[0].step !== kSteps) fail(`expected one evaluation at step ${kSteps}`);
  const valDiffs = differences([evals[0].val_loss], [nat.val[nat.val.length - 1]]);
  if (valDiffs.length) fail(`the validation loss at step ${kSteps} differs: ${valDiffs}`);

  const evalOut = path.join(scratch, 'eval.jsonl');
  native(['eval', '--checkpoint', ckpt, '--threads', '1', '--metrics-out', evalOut]);
  const evalLoss = readJsonLines(evalOut)[0].loss;
  const evalDiffs = differences([evals[0].val_loss], [evalLoss]);
  const evalWorst = Math.abs(evals[0].val_loss - evalLoss) / Math.abs(evalLoss);
  if (evalDiffs.length) fail(`native eval of the page's checkpoint differs from the page's: ${evalDiffs}`);

  // The comparison catches a wrong answer: another seed's losses are not the page's.
  const other = nativeRun(kSeed + 1, 3, 3);
  if (differences(intervalMeans(losses.slice(0, 3), 3), other.means).length === 0)
    fail('the comparison cannot tell seed ' + kSeed + ' from seed ' + (kSeed + 1));

  console.log(`same_numbers: the page's ${kSteps} losses (as ${kSteps / kEvery} means of ${kEvery}), its validation ` +
              `loss and native eval of its checkpoint equal native cppgrad-gpt's within ${kBound}; page ` +
              `${pageSeconds.toFixed(1)} s, native ${nativeSeconds.toFixed(1)} s`);
  const worst = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i]) / Math.abs(b[i])));
  const lossWorst = worst(intervalMeans(losses, kEvery), nat.means);
  console.log(`step by step on ${kFewLines} words: ${kSteps} losses within ${kBound}, the largest relative ` +
              `difference ${worst(fewLosses, fewNative)}; ${fewLosses.filter((l, i) => l === fewNative[i]).length} ` +
              'of them bit for bit');
  console.log(`largest relative differences: losses (means of ${kEvery}) ${lossWorst}, ` +
              `validation ${worst([evals[0].val_loss], [nat.val[nat.val.length - 1]])}, eval ${evalWorst}`);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
