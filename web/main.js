// The page's main thread: it owns no model. The worker (worker.js) holds the one training session; this file sends it
// the user's requests and draws its replies. Messages are described in docs/browser.md.
import { drawLossChart, drawAttention, drawColourScale } from './plots.js';
import { showSamples } from './samples_view.js';
import { drawGraph, captions } from './graph_view.js';
import { setupFiles } from './files.js';
import { setupTabs } from './tabs.js';

const $ = (id) => document.getElementById(id);

// What the page knows about the run; window.cppgradPage shows a copy.
const state = {
  ready: false, hasSession: false, loading: false, waitingForReady: true, training: false, sampled: false,
  steps_done: 0, max_steps: Number(document.getElementById('max-steps').value),
  losses: [], vals: [], bigram: null, val_loss: null, attention: null, ms_per_step: null, tokens_per_s: null,
  errors: [], text: null, name: null, pendingData: null, graphWhat: null, sampleSeed: 0,
};

Object.defineProperty(window, 'cppgradPage', {
  get: () => Object.freeze({
    ready: state.ready, steps_done: state.steps_done, losses: state.losses.map((p) => p[1]), bigram: state.bigram,
    val_loss: state.val_loss, ms_per_step: state.ms_per_step, tokens_per_s: state.tokens_per_s,
    errors: [...state.errors],
    attention: state.attention && { word: state.attention.word, tokens: [...state.attention.tokens],
      layers: state.attention.layers, heads: state.attention.heads, T: state.attention.T,
      maps: Float32Array.from(state.attention.maps) },
  }),
});

const params = new URLSearchParams(location.search);
// ?autotrain=N trains N steps as soon as the engine is ready, then samples: a trained view without a click (for a
// screenshot, or a link that shows a learning model straight away).
const autotrain = Math.max(0, Number.parseInt(params.get('autotrain') ?? '0', 10) || 0);
if (autotrain > 0) $('max-steps').value = autotrain;
let autotrainPending = autotrain > 0;
// ?reference=1 runs the readable reference kernels (CPPGRAD_REFERENCE=1), for comparing losses with a native run.
const reference = params.get('reference') === '1';

// ------------------------------------------------------------------------------------------------ status
function setStatus(text, isError = false) {
  $('status').textContent = text;
  $('status').classList.toggle('error', isError);
}

// An error answers one request, which the worker names, and leaves the session as it was: a refused checkpoint or
// text keeps the run the page had, a refused word leaves training going, a failed step ends it. An error without a
// request is the engine failing to start.
const startsRun = (request) => request === undefined || ['init', 'reset', 'load'].includes(request);
function showError(message, request) {
  if (state.errors.length < 100) state.errors.push(message);
  setStatus(message, true);
  if (state.waitingForReady && startsRun(request))
    Object.assign(state, { waitingForReady: false, loading: false, ready: state.hasSession, pendingData: null });
  if (request === 'train') setTraining(false);
  if (request === 'steps') $('max-steps').value = state.max_steps;  // the run keeps its steps
  enableControls();
}

// ------------------------------------------------------------------------------------------------ the worker
const worker = new Worker('worker.js');
worker.addEventListener('error', (e) => {
  e.preventDefault();
  showError(`the engine failed to start: ${e.message || 'worker.js or cppgrad_web.wasm did not load'}`);
});
worker.addEventListener('messageerror', () => showError('a message from the engine could not be read'));
const send = (message, transfer = []) => worker.postMessage(message, transfer);

// The run's config as TrainConfig's JSON keys; a key left out (an empty or bad box) keeps cppgrad-gpt train's default,
// and ready's config then shows the value the run took.
function config() {
  const seed = Number($('seed').value), steps = Number($('max-steps').value), lr = Number($('lr').value);
  return { format: $('format').value, ...(Number.isInteger(seed) && seed >= 0 ? { seed } : {}),
           ...(Number.isInteger(steps) && steps > 0 ? { steps } : {}), ...(lr > 0 ? { lr } : {}) };
}

// init, reset and load each end in 'ready' (a new run) or an error; until then chunks of the old run are ignored.
// The worker handles messages in order, so Train, Sample or Download pressed meanwhile apply to the new run.
function request(message, transfer, status) {
  Object.assign(state, { ready: false, waitingForReady: true, loading: message.type === 'load' });
  if (message.type !== 'load') Object.assign(state, { steps_done: 0, max_steps: message.config.steps ?? state.max_steps });
  setTraining(false);
  enableControls();
  send(message, transfer);
  setStatus(status);
}

function startRun(type) {
  const message = { type, config: config() };
  const data = state.pendingData ?? (state.text != null ? { text: state.text, name: state.name } : null);
  if (data) Object.assign(message, data);
  if (type === 'init' && reference) message.reference = true;
  request(message, [], data && type === 'init' ? `Reading ${data.name}…`
                       : type === 'init' ? 'Loading the engine and the words…' : 'Starting over…');
}

// A seed, step count or learning rate changed before the first step restarts the run at once (the same as starting it
// so natively). Later, more steps grow the run (train --resume --steps N: a finished run trains on); a new seed or
// learning rate is a new run, which Reset starts.
function reconfigure(event) {
  if (!state.hasSession || state.loading) return;
  if (state.steps_done === 0 && !state.training) startRun('reset');
  else if (event.target.id === 'max-steps') send({ type: 'steps', steps: Number.parseInt($('max-steps').value, 10) });
  else setStatus('A new seed or learning rate is a new run: press Reset to start it.');
}
$('seed').addEventListener('change', reconfigure);
$('max-steps').addEventListener('change', reconfigure);
$('lr').addEventListener('change', reconfigure);

// What a run's info shows, from init, reset, load or grown steps: its config's own values, not parsed from the command.
function showRun(m) {
  state.max_steps = m.max_steps;
  $('max-steps').value = m.max_steps;
  $('seed').value = m.config.seed;
  $('lr').value = m.config.lr;
  $('format').value = m.config.format;
  $('command').textContent = m.command;
  $('model-size').textContent = m.params.toLocaleString('en');
  $('vocab-context').textContent = `${m.vocab}, ${m.context}`;
  $('top-k').max = String(m.vocab);  // top-k beyond the vocabulary keeps everything, as 0 does
  updateNumbers();
  enableControls();
}

const handlers = {
  ready(m) {
    Object.assign(state, { ready: true, hasSession: true, waitingForReady: false, loading: false, steps_done: m.steps_done,
                           max_steps: m.max_steps, bigram: m.bigram_val_loss, losses: [], vals: [], val_loss: null,
                           ms_per_step: null, tokens_per_s: null });
    redraw();
    if (state.pendingData) {
      Object.assign(state, state.pendingData, { pendingData: null });
      $('data-name').textContent = `${state.name} (${state.text.length.toLocaleString('en')} characters)`;
    }
    showRun(m);  // a loaded checkpoint brings its own config
    setStatus(m.steps_done > 0 ? `Loaded at step ${m.steps_done}. Press Train to go on, or Sample.`
                               : 'Ready: press Train and watch the loss fall below the bigram line.');
    requestAttention();
    if (state.graphWhat) requestGraph();
    if (autotrainPending && m.steps_done === 0) autotrainPending = false, toggleTraining();
  },
  steps(m) {
    showRun(m);
    if (!state.training) setStatus(`The run now ends at step ${m.max_steps}: press Train to go on.`);
  },
  progress(m) {
    if (state.waitingForReady) return;  // a chunk of the run a reset just replaced
    for (const s of m.steps) state.losses.push([s.step, s.loss]);
    Object.assign(state, { steps_done: m.steps_done, ms_per_step: m.ms_per_step, tokens_per_s: m.tokens_per_s });
    updateNumbers();
    redraw();
  },
  eval(m) {
    if (state.waitingForReady) return;
    state.vals.push([m.step, m.val_loss]);
    state.val_loss = m.val_loss;
    updateNumbers();
    redraw();
  },
  done() {
    setTraining(false);
    enableControls();
    setStatus(`Done: ${state.steps_done} steps. Sample from it, download it, or raise the steps to train on.`);
    if (autotrain > 0 && !state.sampled) sample();
  },
  attention(m) {
    if (m.word !== $('word').value) return;  // the user typed on since
    state.attention = m;
    drawAttention($('attention'), m);
  },
  samples(m) {
    showSamples($('samples'), $('explain'), m.samples);
    if (autotrain > 0 && !state.sampled) $('samples').querySelector('button')?.click();
    state.sampled = true;
  },
  checkpoint(m) {
    const url = URL.createObjectURL(new Blob([m.bytes], { type: 'application/octet-stream' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: m.name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    setStatus(`Saved ${m.name}. Natively: cppgrad-gpt sample --checkpoint ${m.name} --explain`);
  },
  graph(m) {
    if (m.what !== $('graph-what').value) return;
    drawGraph($('graph'), m);
  },
  error(m) { showError(m.message, m.request); },
};

worker.addEventListener('message', (e) => {
  const handler = handlers[e.data?.type];
  if (handler) handler(e.data);
});

// ------------------------------------------------------------------------------------------------ controls
function setTraining(on) {
  state.training = on;
  $('train').textContent = on ? 'Pause' : 'Train';
  $('train').setAttribute('aria-pressed', String(on));
}

// Usable once a run exists, except while a checkpoint loads (its steps are not known yet).
function enableControls() {
  const usable = state.hasSession && !state.loading, finished = state.steps_done >= state.max_steps;
  $('train').disabled = !usable || (finished && !state.training);
  for (const id of ['reset', 'sample', 'download']) $(id).disabled = !usable;
}

function toggleTraining() {
  if (!state.hasSession || state.loading) return;
  setTraining(!state.training);
  send({ type: state.training ? 'train' : 'pause' });
  setStatus(state.training ? 'Training… (the page stays responsive: the work is in a Web Worker)' : 'Paused.');
}

$('train').addEventListener('click', toggleTraining);
$('reset').addEventListener('click', () => startRun('reset'));

function sample() {
  const s = { num: 10, temperature: +$('temperature').value, top_k: +$('top-k').value, top_p: +$('top-p').value,
              seed: state.sampleSeed++, prompt: $('prompt').value };
  send({ type: 'sample', ...s });
  const flags = [`--temperature ${s.temperature}`, s.top_k ? `--top-k ${s.top_k}` : '', s.top_p < 1 ? `--top-p ${s.top_p}` : '',
                 s.prompt ? `--prompt '${s.prompt}'` : '', `--seed ${s.seed}`].filter(Boolean).join(' ');
  $('sample-command').textContent =
    `cppgrad-gpt sample --checkpoint cppgrad-gpt-step${state.steps_done}.ckpt --num 10 ${flags} --explain`;
}
$('sample').addEventListener('click', sample);

for (const id of ['temperature', 'top-k', 'top-p']) {
  const show = () => {
    const v = $(id).value;
    $(`${id}-value`).textContent = id === 'top-k' && v === '0' ? 'all' : v;
  };
  $(id).addEventListener('input', show);
  show();
}

$('download').addEventListener('click', () => send({ type: 'save' }));

// The attention of a new word is asked for once the user stops typing for a moment.
let attentionTimer = 0;
function requestAttention() {
  const word = $('word').value;
  if (state.hasSession && word !== '') send({ type: 'attention', word });
}
$('word').addEventListener('input', () => {
  clearTimeout(attentionTimer);
  attentionTimer = setTimeout(requestAttention, 150);
});

setupFiles({
  // A dropped text becomes the page's data once the worker accepts it (ready); a refused one leaves the old data.
  // A new text is an init (the worker keeps it for later resets).
  onText(text, name) {
    state.pendingData = { text, name };
    startRun('init');
  },
  onFormat() { if (state.hasSession || state.text != null) startRun('reset'); },
  onCheckpoint(bytes, name) { request({ type: 'load', bytes, name }, [bytes], `Loading ${name}…`); },
  onError: (message) => showError(message, 'file'),
});

// ------------------------------------------------------------------------------------------------ numbers and plots
const fixed = (v, digits) => (v == null ? '' : v.toFixed(digits));
function updateNumbers() {
  const last = state.losses[state.losses.length - 1];
  $('step').textContent = String(state.steps_done);
  $('steps-total').textContent = String(state.max_steps);
  $('loss').textContent = last ? last[1].toFixed(4) : '';
  $('bigram').textContent = fixed(state.bigram, 4);
  $('val-loss').textContent = fixed(state.val_loss, 4);
  $('ms-per-step').textContent = fixed(state.ms_per_step, 1);
  $('tokens-per-s').textContent = state.tokens_per_s == null ? '' : Math.round(state.tokens_per_s).toLocaleString('en');
}

// Progress arrives several times a second; the chart is drawn at most once a frame.
let frame = 0;
function redraw() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    drawLossChart($('loss-chart'), state);
  });
}
window.addEventListener('resize', redraw);

// ------------------------------------------------------------------------------------------------ tabs and graph
function requestGraph() {
  state.graphWhat = $('graph-what').value;
  $('graph-caption').textContent = captions[state.graphWhat];
  send({ type: 'graph', what: state.graphWhat });
}
$('graph-what').addEventListener('change', requestGraph);

setupTabs((name) => (name === 'graph' ? requestGraph() : redraw()));

drawColourScale($('attention-scale'));
updateNumbers();
redraw();
startRun('init');
