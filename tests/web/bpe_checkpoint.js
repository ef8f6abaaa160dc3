// A BPE checkpoint in the page's module (docs/browser.md, "A BPE model"): native cppgrad-gpt trains a BPE
// (`tokenize train`) and a model on it (`train --tokenizer bpe:FILE --format text`); the .model file is then
// removed, and the module the page loads (cppgrad_web.js / .wasm, under node, through the PageSession calls
// web/worker.js makes) takes the dropped text and the checkpoint, which carries its BPE. Checked: the vocabulary and
// step, the history a native checkpoint brings (its evaluations, no steps' losses), and that a word's attention labels are its BPE tokens as native `tokenize encode` gives them (not its
// characters). That training goes on exactly is tests/web/test_session.cpp's (natively).
//
//   node bpe_checkpoint.js MODULE_JS NATIVE_BIN_DIR SCRATCH_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const {failer, loadModule, nativeProgram} = require('./native_side.js');

const [moduleJs, nativeBin, scratch] = process.argv.slice(2);
const kText = path.join(__dirname, '..', 'golden', 'tokenizer', 'kjv_genesis_1-3.txt');  // 11 KB of English
const kWord = 'In the beginning God created';
const kVocab = 300;

const fail = failer('bpe_checkpoint');
const native = nativeProgram(nativeBin, fail);
fs.mkdirSync(scratch, {recursive: true});

async function main() {
  const text = path.join(scratch, 'genesis.txt'), model = path.join(scratch, 'genesis.model');
  const ckpt = path.join(scratch, 'bpe.ckpt'), word = path.join(scratch, 'word.txt');
  fs.copyFileSync(kText, text);
  native(['tokenize', 'train', '--vocab-size', String(kVocab), '--data', text, '--out', model]);
  native(['train', '--tokenizer', `bpe:${model}`, '--format', 'text', '--data', text, '--steps', '4', '--context', '16',
          '--layers', '1', '--heads', '2', '--d-model', '16', '--batch-size', '4', '--eval-every', '4', '--threads',
          '1', '--samples', '0', '--quiet', '--save', ckpt]);
  fs.writeFileSync(word, kWord);
  const ids = native(['tokenize', 'encode', '--tokenizer', `bpe:${model}`, '--data', word]).trim().split(/\s+/);
  fs.rmSync(model);  // the page has no .model file: the checkpoint carries the BPE

  const module = await loadModule(moduleJs);
  const page = new module.PageSession();
  const check = (r) => {
    if (r && r.error !== undefined) fail(`the module refused: ${r.error}`);
    return r;
  };
  // As the worker does: a dropped text goes to /dropped/<name>, a checkpoint to load is a file of the module's.
  module.FS.mkdirTree('/dropped');
  module.FS.writeFile('/dropped/genesis.txt', fs.readFileSync(text));
  module.FS.writeFile('/bpe.ckpt', fs.readFileSync(ckpt));
  const info = check(page.load('/bpe.ckpt'));
  if (info.vocab !== kVocab) fail(`the loaded model has ${info.vocab} tokens, not the BPE's ${kVocab}`);
  if (info.steps_done !== 4) fail(`the loaded model has done ${info.steps_done} steps, not 4`);
  // A native checkpoint has no page_step_losses: it loads with its evaluations (--eval-every 4: one, at step 4) and
  // no steps' losses, which the page then draws as the interval's mean.
  const history = check(page.history());
  if (history.losses.length !== 0 || history.evals.length !== 1 || history.evals[0].step !== 4 ||
      !(history.evals[0].val_loss > 0))
    fail(`the native checkpoint's history reads as ${JSON.stringify(history)}: expected no step losses and one ` +
         'evaluation at step 4');

  const a = check(page.attention(kWord));
  if (a.tokens.length !== ids.length || a.tokens.length >= kWord.length)
    fail(`the attention over '${kWord}' reads ${a.tokens.length} tokens [${a.tokens}]; native tokenize encode ` +
         `gives ${ids.length} BPE tokens`);
  if (a.tokens.join('').split('␣').join(' ') !== kWord)
    fail(`the attention labels [${a.tokens}] do not spell '${kWord}'`);

  // The run is at its --steps (4): the page trains no further, as native train would not.
  const r = check(page.train(2));
  if (r.steps.length !== 0 || !r.done) fail(`a run at its --steps trained on: ${JSON.stringify(r.steps)}`);
  console.log(`bpe_checkpoint: the module loaded a ${kVocab}-token BPE checkpoint without its .model file; ` +
              `'${kWord}' is ${ids.length} tokens [${a.tokens}] as natively`);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
