// The page's Web Worker (docs/browser.md, "The page's engine"): it loads the module (cppgrad_web.js + .wasm), owns the
// one run (web::Session through web/bindings.cpp's PageSession), and answers the page's messages. Training runs here
// in chunks of about kChunkMs, then yields (setTimeout 0) so that pause and the other messages get through.
//
// page -> worker                                  worker -> page (or {type:'error', request, message}: request is the
//                                                  type of the message it answers, 'train' for a failed step)
//   {type:'init', config, text?, name?, reference?}  {type:'ready', vocab, context, params, bigram_val_loss,
//   {type:'reset', config}                             steps_done, max_steps, tokens_per_step, command,
//                                                     config: {seed, lr, format, steps, ...: TrainConfig's keys}}
//   {type:'load', bytes, name}                      the same
//   {type:'steps', steps}                           {type:'steps', the same fields}: the run grown to `steps`
//   {type:'train'} / {type:'pause'}                 {type:'progress', steps:[{step, loss}], steps_done, ms_per_step,
//                                                     tokens_per_s}, {type:'eval', step, val_loss, val_bpb},
//                                                     {type:'done'}, and {type:'attention', ...} about every 0.5 s
//   {type:'attention', word}                        {type:'attention', word, tokens, layers, heads, T, maps}
//   {type:'sample', num, temperature, top_k, top_p, seed, prompt}  {type:'samples', samples}
//   {type:'save'}                                   {type:'checkpoint', name, bytes}
//   {type:'graph', what}                            {type:'graph', what, nodes, edges}
'use strict';

importScripts('cppgrad_web.js');

const kWordsPath = '/usr/share/dict/american-english';  // cppgrad-gpt's default --data: a checkpoint names it
const kDroppedDir = '/dropped/';                        // web/session.h's kDroppedDir
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
  if (!response.ok) throw new PageError(`words.txt: HTTP ${response.status} (build web/dist again: docs/browser.md)`);
  module.FS.mkdirTree('/usr/share/dict');
  module.FS.writeFile(kWordsPath, new Uint8Array(await response.arrayBuffer()));
  for (const dir of [kDroppedDir, kLoadedDir, '/tmp/']) module.FS.mkdirTree(dir);
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

function ready(info) {
  state.info = info;
  state.ready = true;
  state.training = false;
  state.run += 1;
  state.msPerStep = 0;
  state.tokensPerS = 0;
  state.wordOk = true;
  postMessage({type: 'ready', ...info});
}

function start(config) {
  const c = Object.assign({}, config || {});
  if (state.text !== null) {
    const path = kDroppedDir + state.name;
    state.module.FS.writeFile(path, state.text);
    c.data = path;
  }
  ready(check(state.page.init(JSON.stringify(c))));
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
    if (typeof m.text === 'string') {
      state.text = m.text;
      state.name = fileName(m.name, 'dropped.txt');
    } else {
      state.text = null;
      state.name = null;
    }
    start(m.config);
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
    try {
      const info = state.page.load(path);
      if (info.error !== undefined) throw new PageError(info.error.split(path).join(name));
      ready(info);
    } finally {
      state.module.FS.unlink(path);
    }
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

// An error names the request it answers, so the page knows what failed: a refused word leaves training going, a
// failed step ends it, a refused init, reset or load leaves the run the page had.
function reply(e, request) {
  if (e instanceof PageError) postMessage({type: 'error', request, message: e.message});
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
