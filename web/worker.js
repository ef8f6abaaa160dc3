// The page's Web Worker (docs/browser.md, "The page's engine"): it loads the module (cppgrad_web.js + .wasm), owns the
// one run (web::Session through web/bindings.cpp's PageSession), and answers the page's messages. Training runs here
// in chunks of about kChunkMs, then yields (setTimeout 0) so that pause and the other messages get through.
//
// page -> worker                                  worker -> page (or {type:'error', request, message}: request is the
//                                                  type of the message it answers, 'train' for a failed step)
//   {type:'init', config, text?, name?, reference?}  {type:'ready', vocab, context, params, bigram_val_loss,
//   {type:'reset', config}                             steps_done, max_steps, tokens_per_step, command,
//                                                     config: {seed, lr, format, steps, ...: TrainConfig's keys},
//                                                     history: {losses, evals}, data: {name, characters} of
//                                                     the text it reads, or null (the word list)}
//   {type:'load', bytes, name}                      the same
//   {type:'steps', steps}                           {type:'steps', the same fields}: the run grown to `steps`
//   {type:'train'} / {type:'pause'}                 {type:'progress', steps:[{step, loss}], steps_done, ms_per_step,
//                                                     tokens_per_s}, {type:'evaluating', step} before a step that
//                                                     evaluates, {type:'eval', step, val_loss, val_bpb},
//                                                     {type:'done'}, and {type:'attention', ...} about every 0.5 s
//   {type:'attention', word}                        {type:'attention', word, tokens, layers, heads, T, maps}
//   {type:'sample', num, temperature, top_k, top_p, seed, prompt}  {type:'samples', samples}
//   {type:'save'}                                   {type:'checkpoint', name, bytes}
//   {type:'graph', what}                            {type:'graph', what, nodes, edges}
'use strict';

importScripts('cppgrad_web.js');

let droppedDir = null;  // the module's, once it is loaded
const kLoadedDir = '/loaded/';
const kSavePath = '/tmp/page.ckpt';
const kChunkMs = 60;
const kAttentionEveryMs = 500;

const state = {
  module: null,       // the instantiated module, once
  page: null,         // its PageSession
  ready: false,       // a run exists (init or load succeeded)
  training: false,
  run: 0,             // bumped by every init/reset/load, so a chunk scheduled for an older run stops
  text: null,         // the dropped text and its name, for reset
  name: null,
  word: 'hello',      // whose attention is redrawn while training
  wordOk: true,       // the latest attention request succeeded (a refused word is not retried every 0.5 s)
  lastAttention: 0,
  info: null,
  msPerStep: 0,
  tokensPerS: 0,
};

class PageError extends Error {}  // a refusal to show the page, not a bug

function check(result) {
  if (result && result.error !== undefined) throw new PageError(result.error);
  return result;
}

// Reference kernels (CPPGRAD_REFERENCE=1) are chosen when the module starts: the page's ?reference=1 reaches the
// first init as `reference: true` (or the worker's own URL carries it).
async function loadModule(reference) {
  if (state.module) return state.module;
  const ownUrl = new URL(self.location.href);
  const useReference = reference === true || ownUrl.searchParams.get('reference') === '1';
  const module = await createCppgrad({
    preRun: [(m) => { if (useReference) m.ENV.CPPGRAD_REFERENCE = '1'; }],
  });
  const response = await fetch('words.txt');
  if (!response.ok) throw new PageError(`words.txt: HTTP ${response.status} (build web_dist again: docs/browser.md)`);
  // The module says where the word list goes (cppgrad-gpt's default --data: a checkpoint names it) and where a
  // dropped text goes (web/session.h's kDroppedDir).
  droppedDir = module.droppedDir;
  module.FS.mkdirTree(module.defaultData.slice(0, module.defaultData.lastIndexOf('/')));
  module.FS.writeFile(module.defaultData, new Uint8Array(await response.arrayBuffer()));
  for (const dir of [droppedDir, kLoadedDir, '/tmp/']) module.FS.mkdirTree(dir);
  state.page = new module.PageSession();
  state.module = module;
  return module;
}

// A file name as the page gave it, reduced to one path component (spaces and other characters kept: the command line
// quotes them).
function fileName(name, fallback) {
  const base = String(name || '').split(/[\\/]/).pop().replace(/[\u0000-\u001f]/g, '_');
  return base && base !== '.' && base !== '..' ? base : fallback;
}

// A run exists: what the page shows of it, with the losses it knows (a loaded checkpoint's history) and the name of
// the text it reads (null: the word list).
function ready(info) {
  state.info = info;
  state.ready = true;
  state.training = false;
  state.run += 1;
  state.msPerStep = 0;
  state.tokensPerS = 0;
  state.wordOk = true;
  const data = state.text === null ? null : {name: state.name, characters: state.text.length};
  postMessage({type: 'ready', ...info, history: check(state.page.history()), data});
}

// A new run on `data` ({text, name}, or null for the word list). The worker's data becomes `data` only once the run
// starts: a text the trainer refuses (binary, say) leaves the data of the run before, so a later Reset or another
// "read it as" trains on that again, never on the refused file.
function start(config, data = state.text === null ? null : {text: state.text, name: state.name}) {
  const c = Object.assign({}, config || {});
  if (data !== null) {
    c.data = droppedDir + data.name;
    state.module.FS.writeFile(c.data, data.text);
  }
  const info = state.page.init(JSON.stringify(c));
  if (info.error !== undefined) {
    // The refused text removed (a checkpoint's data is looked for there), the kept one back if it had the same name.
    if (data !== null && data.name !== state.name) state.module.FS.unlink(c.data);
    if (state.text !== null) state.module.FS.writeFile(droppedDir + state.name, state.text);
    throw new PageError(info.error);
  }
  [state.text, state.name] = data === null ? [null, null] : [data.text, data.name];
  ready(info);
}

function attentionMessage(word) {
  const a = check(state.page.attention(word));
  return {type: 'attention', word, tokens: a.tokens, layers: a.layers, heads: a.heads, T: a.T, maps: a.maps};
}

function postAttention(word) {
  try {
    const m = attentionMessage(word);
    state.wordOk = true;
    postMessage(m, [m.maps.buffer]);
  } catch (e) {
    state.wordOk = false;
    throw e;
  }
}

// One chunk: single steps until kChunkMs have passed, then the losses, the evaluations, and what comes next.
function chunk(run) {
  if (!state.training || run !== state.run) return;
  try {
    const t0 = performance.now();
    const steps = [], evals = [];
    let stepMs = 0, timedSteps = 0, done = false;
    while (!done && performance.now() - t0 < kChunkMs) {
      // A step that evaluates runs the whole validation split (seconds): the chunk before it is sent first, then
      // the page is told, so its counter does not stand still without a word.
      const next = state.info.steps_done + steps.length + 1;
      if (next % state.info.config.eval_every === 0 || next === state.info.max_steps) {
        if (steps.length > 0) break;
        postMessage({type: 'evaluating', step: next});
      }
      const s0 = performance.now();
      const r = check(state.page.train(1));
      const dt = performance.now() - s0;
      steps.push(...r.steps);
      evals.push(...r.evals);
      if (r.evals.length === 0) stepMs += dt, timedSteps += r.steps.length;  // an evaluation's time is not a step's
      done = r.done;
    }
    if (timedSteps > 0) {
      state.msPerStep = stepMs / timedSteps;
      state.tokensPerS = timedSteps * state.info.tokens_per_step / (stepMs / 1000);
    }
    const stepsDone = steps.length ? steps[steps.length - 1].step : state.info.steps_done;
    state.info.steps_done = stepsDone;
    postMessage({type: 'progress', steps, steps_done: stepsDone, ms_per_step: state.msPerStep,
                 tokens_per_s: state.tokensPerS});
    for (const e of evals) postMessage({type: 'eval', step: e.step, val_loss: e.val_loss, val_bpb: e.val_bpb});
    const now = performance.now();
    if (state.wordOk && (done || now - state.lastAttention >= kAttentionEveryMs)) {
      state.lastAttention = now;
      try {
        postAttention(state.word);
      } catch (e) {
        reply(e, 'attention');  // said once: the word is not retried until the page sends another
      }
    }
    if (done) {
      state.training = false;
      postMessage({type: 'done'});
      return;
    }
  } catch (e) {
    state.training = false;
    reply(e, 'train');
    return;
  }
  setTimeout(() => chunk(run), 0);
}

function requireRun() {
  if (!state.ready) throw new PageError('no run yet: the model is still loading');
}

const handlers = {
  async init(m) {
    await loadModule(m.reference);
    state.training = false;
    start(m.config, typeof m.text === 'string' ? {text: m.text, name: fileName(m.name, 'dropped.txt')} : null);
  },
  async reset(m) {
    await loadModule();
    state.training = false;
    start(m.config);
  },
  async load(m) {
    await loadModule();
    state.training = false;
    const name = fileName(m.name, 'page.ckpt');
    const path = kLoadedDir + name;
    state.module.FS.writeFile(path, new Uint8Array(m.bytes));
    let info;
    try {
      info = state.page.load(path);
      if (info.error !== undefined) throw new PageError(info.error.split(path).join(name));
    } finally {
      state.module.FS.unlink(path);
    }
    // The loaded run's data is what its config names: the word list, or a dropped text (read back, so a Reset
    // trains on it again).
    const data = String(info.config.data);
    if (data.startsWith(droppedDir)) {
      state.name = data.slice(droppedDir.length);
      state.text = state.module.FS.readFile(data, {encoding: 'utf8'});
    } else {
      state.text = null;
      state.name = null;
    }
    ready(info);
  },
  train() {
    requireRun();
    if (state.training) return;
    if (state.info.steps_done >= state.info.max_steps) {
      postMessage({type: 'done'});
      return;
    }
    state.training = true;
    const run = state.run;
    setTimeout(() => chunk(run), 0);
  },
  pause() {
    state.training = false;
  },
  steps(m) {
    requireRun();
    state.info = check(state.page.steps(Number(m.steps)));
    postMessage({type: 'steps', ...state.info});
  },
  attention(m) {
    requireRun();
    state.word = String(m.word);
    postAttention(state.word);
  },
  sample(m) {
    requireRun();
    const samples = check(state.page.samples(Number(m.num), Number(m.temperature), Number(m.top_k), Number(m.top_p),
                                             Number(m.seed), String(m.prompt || '')));
    postMessage({type: 'samples', samples});
  },
  save() {
    requireRun();
    const r = check(state.page.save(kSavePath));
    const bytes = state.module.FS.readFile(kSavePath);
    state.module.FS.unlink(kSavePath);
    const name = `cppgrad-gpt-step${r.steps_done}.ckpt`;
    postMessage({type: 'checkpoint', name, bytes: bytes.buffer}, [bytes.buffer]);
  },
  async graph(m) {
    await loadModule();
    const what = String(m.what);
    const g = JSON.parse(check(state.page.graph(what)).json);
    postMessage({type: 'graph', what, nodes: g.nodes, edges: g.edges});
  },
};

// The engine speaks as cppgrad-gpt does, of its flags; the page has boxes with their own names.
const kControls = [['--lr', 'the learning rate'], ['--steps', 'steps'], ['--seed', 'seed'], ['--format', '"read it as"'],
                   ['--temperature', 'temperature'], ['--top-k', 'top-k'], ['--top-p', 'top-p'],
                   ['--prompt', '"starts with"'], ['--schedule cosine', 'a cosine schedule']];
// The trainer's advice to lower flags the page has no box for: in the page it is the text's longest line that sets
// the context (a binary file has few line breaks).
const kTooBig = /: lower --batch-size \(\d+\), --context \((\d+)\), --d-model or --layers/;
function inPageWords(message) {
  const text = message.replace(kTooBig, ': the longest line makes a context of $1 tokens, too long to train here. ' +
                               'Drop a text of shorter lines, or read it as text (windows of running text)');
  return kControls.reduce((t, [flag, control]) => t.split(flag).join(control), text);
}

// An error names the request it answers, so the page knows what failed: a refused word leaves training going, a
// failed step ends it, a refused init, reset or load leaves the run the page had.
function reply(e, request) {
  if (e instanceof PageError) postMessage({type: 'error', request, message: inPageWords(e.message)});
  else postMessage({type: 'error', request, message: `bug in the page's worker: ${e && e.stack ? e.stack : e}`});
}

// Messages are handled one at a time, in order (init's module load is asynchronous).
let queue = Promise.resolve();
self.onmessage = (event) => {
  const m = event.data || {};
  const handler = handlers[m.type];
  queue = queue.then(async () => {
    try {
      if (!handler) throw new PageError(`unknown message type '${m.type}'`);
      await handler(m);
    } catch (e) {
      reply(e, String(m.type));
    }
  });
};
