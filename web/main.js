// The page's main thread: it owns no model. The worker (worker.js) holds the one training session; this file sends it
// the user's requests and draws its replies. Messages are described in docs/browser.md.
import { drawLossChart, drawAttention, drawColourScale } from './plots.js';
import { showSamples } from './samples_view.js';
import { drawGraph, captions } from './graph_view.js';
import { setupFiles } from './files.js';
import { setupTabs } from './tabs.js';
import { boxIds, readBox, showBoxes } from './boxes.js';

const $ = (id) => document.getElementById(id);

// What the page knows about the run; window.cppgradPage shows a copy.
const state = {
  ready: false, hasSession: false, loading: false, waitingForReady: true, training: false, sampled: false,
  steps_done: 0, max_steps: Number(document.getElementById('max-steps').value),
  losses: [], vals: [], means: [], historyFrom: 0, bigram: null, val_loss: null, attention: null, ms_per_step: null,
  tokens_per_s: null, errors: [], errorFrom: null, pendingData: null, graphWhat: null,
  sampleSeed: 0, format: 'lines', dtype: 'float32', savedAt: 0, evaluating: null, diverged: null, before: null,
  chart: null,
};

Object.defineProperty(window, 'cppgradPage', {
  get: () => Object.freeze({
    ready: state.ready, steps_done: state.steps_done, losses: state.losses.map((p) => p[1]), bigram: state.bigram,
    loss_steps: state.losses.map((p) => p[0]), vals: state.vals.map((p) => [...p]), val_loss: state.val_loss,
    ms_per_step: state.ms_per_step, tokens_per_s: state.tokens_per_s, errors: [...state.errors],
    evaluating: state.evaluating, diverged: state.diverged, unsaved_steps: unsavedSteps(),
    chart: state.chart && { ...state.chart },
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
  if (!isError) state.errorFrom = null;
}

// What the run is doing, for the status line once nothing else is to be said (an error cleared, say).
function restingStatus() {
  if (state.diverged) return state.diverged;
  if (state.evaluating) return `Evaluating: the validation loss at step ${state.evaluating} (the whole validation ` +
                               'split, a few seconds)…';
  if (state.training) return 'Training… (the page stays responsive: the work is in a Web Worker)';
  if (!state.hasSession) return 'Loading the engine…';
  if (state.steps_done >= state.max_steps) return `Done: ${state.steps_done} steps.`;
  return state.steps_done > 0 ? `At step ${state.steps_done}: press Train to go on, or Sample.`
                              : 'Ready: press Train and watch the loss fall below the bigram line.';
}

// A request that succeeds clears an error shown for the same kind of request; a new run clears any.
function succeeded(request) {
  if (state.errorFrom !== null && (request === 'ready' || request === state.errorFrom)) setStatus(restingStatus());
}

// An error answers one request, which the worker names, and leaves the session as it was: a refused checkpoint or
// text keeps the run the page had, a refused word leaves training going, a failed step ends it. An error without a
// request is the engine failing to start.
const startsRun = (request) => request === undefined || ['init', 'reset', 'load'].includes(request);
function showError(message, request) {
  if (state.errors.length < 100) state.errors.push(message);
  setStatus(message, true);
  state.errorFrom = request ?? null;
  if (state.waitingForReady && startsRun(request)) {
    // The run the page had goes on: its step and length as they were before the request.
    Object.assign(state, { waitingForReady: false, loading: false, ready: state.hasSession, pendingData: null },
                  state.before ?? {});
    $('format').value = state.format;
    $('dtype').value = state.dtype;
    updateNumbers();
  }
  if (request === 'train') {
    setTraining(false);
    state.evaluating = null;
    if (message.startsWith('training diverged')) diverge(message);
  }
  if (request === 'steps') $('max-steps').value = state.max_steps;  // the run keeps its steps
  if (request === 'attention') clearAttention(message);
  if (request === 'sample') clearSamples(message);
  enableControls();
}

// A diverged run stays on screen (its losses up to the step that failed) and says so where its numbers would be:
// the worker refuses maps, samples and the checkpoint of it until Reset, each with the reason.
function diverge(message) {
  state.diverged = `${message.split('.')[0]}. Press Reset to start a new run (with a smaller learning rate).`;
  clearSamples(state.diverged);
  requestAttention();  // answered by the reason, shown in place of the maps
  updateNumbers();
}

function clearAttention(why) {
  $('attention').replaceChildren();
  delete $('attention').dataset.key;
  state.attention = null;
  $('attention-note').textContent = `No maps: ${why}`;
}

function clearSamples(why) {
  $('samples').replaceChildren();
  $('explain').hidden = true;
  $('samples-note').textContent = `No samples: ${why}`;
}

// ------------------------------------------------------------------------------------------------ the worker
const worker = new Worker('worker.js');
worker.addEventListener('error', (e) => {
  e.preventDefault();
  showError(`the engine failed to start: ${e.message || 'worker.js or cppgrad_web.wasm did not load'}`);
});
worker.addEventListener('messageerror', () => showError('a message from the engine could not be read'));
const send = (message, transfer = []) => worker.postMessage(message, transfer);

// The run's config as TrainConfig's JSON keys, from boxes that hold values the page takes (showBoxes: a bad one
// keeps Train and Reset off, so no run starts from it).
function config() {
  const run = { steps_done: 0, max_steps: state.max_steps };
  return { format: $('format').value, dtype: $('dtype').value, seed: readBox('seed', run).value,
           steps: readBox('max-steps', run).value, lr: readBox('lr', run).value };
}

// init, reset and load each end in 'ready' (a new run) or an error; until then chunks of the old run are ignored.
// The worker handles messages in order, so Train, Sample or Download pressed meanwhile apply to the new run.
function request(message, transfer, status) {
  state.before = { steps_done: state.steps_done, max_steps: state.max_steps };  // what a refusal goes back to
  Object.assign(state, { ready: false, waitingForReady: true, loading: message.type === 'load', evaluating: null });
  if (message.type !== 'load') Object.assign(state, { steps_done: 0, max_steps: message.config.steps ?? state.max_steps });
  setTraining(false);
  enableControls();
  send(message, transfer);
  setStatus(status);
}

// Returns false, saying why, when a box holds a value the page refuses: no run starts from a default put in its place.
function startRun(type) {
  if (!boxesOk()) {
    showError('A box under Run holds a value the page refuses (the message beside it says why): fix it first.', 'boxes');
    return false;
  }
  const message = { type, config: config() };
  const data = state.pendingData;  // a dropped text; the worker keeps the run's own for a reset
  if (data) Object.assign(message, data);
  if (type === 'init' && reference) message.reference = true;
  request(message, [], data && type === 'init' ? `Reading ${data.name}…`
                       : type === 'init' ? 'Loading the engine and the words…' : 'Starting over…');
  return true;
}

// A seed, step count, learning rate or dtype changed before the first step restarts the run at once (the same as
// starting it so natively). Later, more steps grow the run (train --resume --steps N: a finished run trains on); a new
// seed, learning rate or dtype is a new run, which Reset starts. A box the page refuses changes nothing but its
// message.
function reconfigure(event) {
  if (!boxesOk() || !state.hasSession || state.loading) return;
  const steps = readBox('max-steps', state).value;
  if (state.steps_done === 0 && !state.training) startRun('reset');
  else if (event.target.id === 'max-steps' && steps !== state.max_steps) send({ type: 'steps', steps });
  else if (event.target.id !== 'max-steps')
    setStatus('A new seed, learning rate or dtype is a new run: press Reset to start it.');
}
for (const id of boxIds) {
  $(id).addEventListener('input', () => boxesOk());
  $(id).addEventListener('change', reconfigure);
}
$('dtype').addEventListener('change', reconfigure);

function boxesOk() {
  const ok = showBoxes(state);
  enableControls();
  return ok;
}

// What a run's info shows, from init, reset, load or grown steps: its config's own values, not parsed from the command.
function showRun(m) {
  state.max_steps = m.max_steps;
  $('max-steps').value = m.max_steps;
  $('seed').value = m.config.seed;
  $('lr').value = m.config.lr;
  $('format').value = m.config.format;
  state.format = m.config.format;
  state.dtype = m.config.dtype ?? 'float32';  // a config writes the dtype only when it is not the default
  $('dtype').value = state.dtype;
  $('command').textContent = m.command;
  $('model-size').textContent = m.params.toLocaleString('en');
  $('vocab-context').textContent = `${m.vocab}, ${m.context}`;
  $('top-k').max = String(m.vocab);  // top-k beyond the vocabulary keeps everything, as 0 does
  showBoxes(state);
  updateNumbers();
  enableControls();
}

// The Data box names the text the run reads, as the worker says (a loaded checkpoint's, not the last one dropped).
function showData(data) {
  $('data-name').textContent = data === null ? 'words.txt (wamerican)'
    : `${data.name} (${data.characters.toLocaleString('en')} characters)`;
}

// The losses a new run knows: none, or a loaded checkpoint's. Its steps' losses if the page saved it; else (a native
// checkpoint) its evaluations, whose train_loss is the mean since the previous one. historyFrom: the first step the
// chart's axis covers (0 unless the run knows nothing of its first steps).
function takeHistory(m) {
  const { losses, evals } = m.history;
  state.losses = losses.map((s) => [s.step, s.loss]);
  state.vals = evals.map((e) => [e.step, e.val_loss]);
  state.means = losses.length ? [] : evals.filter((e) => Number.isFinite(e.train_loss)).map((e) => [e.step, e.train_loss]);
  state.val_loss = evals.length ? evals[evals.length - 1].val_loss : null;
  state.historyFrom = losses.length ? losses[0].step - 1 : evals.length ? 0 : m.steps_done;
}

const handlers = {
  ready(m) {
    Object.assign(state, { ready: true, hasSession: true, waitingForReady: false, loading: false, steps_done: m.steps_done,
                           max_steps: m.max_steps, bigram: m.bigram_val_loss, ms_per_step: null, tokens_per_s: null,
                           pendingData: null, before: null, savedAt: m.steps_done, evaluating: null, diverged: null });
    takeHistory(m);
    redraw();
    showData(m.data);
    showRun(m);  // a loaded checkpoint brings its own config
    $('samples-note').textContent = '';
    setStatus(m.steps_done > 0 ? `Loaded at step ${m.steps_done}. Press Train to go on, or Sample.` : restingStatus());
    requestAttention();
    if (state.graphWhat) requestGraph();
    if (autotrainPending && m.steps_done === 0) autotrainPending = false, toggleTraining();
  },
  steps(m) {
    showRun(m);
    succeeded('steps');
    if (!state.training) setStatus(`The run now ends at step ${m.max_steps}: press Train to go on.`);
  },
  progress(m) {
    if (state.waitingForReady) return;  // a chunk of the run a reset just replaced
    for (const s of m.steps) state.losses.push([s.step, s.loss]);
    Object.assign(state, { steps_done: m.steps_done, ms_per_step: m.ms_per_step, tokens_per_s: m.tokens_per_s });
    updateNumbers();
    redraw();
  },
  evaluating(m) {
    if (state.waitingForReady) return;
    state.evaluating = m.step;
    setStatus(restingStatus());
    updateNumbers();
  },
  eval(m) {
    if (state.waitingForReady) return;
    state.vals.push([m.step, m.val_loss]);
    state.val_loss = m.val_loss;
    state.evaluating = null;
    if (state.training) setStatus(restingStatus());
    updateNumbers();
    redraw();
  },
  done() {
    setTraining(false);
    state.evaluating = null;
    enableControls();
    setStatus(`Done: ${state.steps_done} steps. Sample from it, download it, or raise the steps to train on.`);
    if (autotrain > 0 && !state.sampled) sample();
  },
  attention(m) {
    if (m.word !== $('word').value) return;  // the user typed on since
    state.attention = m;
    $('attention-note').textContent = '';
    drawAttention($('attention'), m);
    succeeded('attention');
  },
  samples(m) {
    $('samples-note').textContent = '';
    showSamples($('samples'), $('explain'), m.samples);
    succeeded('sample');
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
    state.savedAt = state.steps_done;
    setStatus(`Saved ${m.name}. Natively: cppgrad-gpt sample --checkpoint ${m.name} --explain`);
  },
  graph(m) {
    if (m.what !== $('graph-what').value) return;
    drawGraph($('graph'), m);
    succeeded('graph');
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
// Train and Reset also wait for the boxes to hold values the page takes, and Train for a run that has not diverged;
// a run in training can always be paused.
function enableControls() {
  const usable = state.hasSession && !state.loading, finished = state.steps_done >= state.max_steps;
  const boxesFine = boxIds.every((id) => $(id).getAttribute('aria-invalid') !== 'true');
  const mayStart = !finished && boxesFine && state.diverged === null;
  $('train').disabled = !usable || !(state.training || mayStart);
  $('reset').disabled = !usable || !boxesFine;
  for (const id of ['sample', 'download']) $(id).disabled = !usable;
}

// ------------------------------------------------------------------------------------------------ nothing lost unasked
// Steps trained since the run started, was loaded or was downloaded: what Reset, another text, another "read it as",
// a loaded checkpoint or leaving the page would throw away.
function unsavedSteps() {
  return state.hasSession && state.diverged === null ? Math.max(0, state.steps_done - state.savedAt) : 0;
}
function mayDiscard(what) {
  const n = unsavedSteps();
  return n === 0 || window.confirm(`${what} discards the ${n.toLocaleString('en')} steps trained since the run ` +
                                   'started or was last saved. Download the checkpoint first to keep them. Go on?');
}
window.addEventListener('beforeunload', (e) => {
  if (unsavedSteps() === 0) return;
  e.preventDefault();
  e.returnValue = '';  // Chromium asks "Leave site?" only with a return value set
});

function toggleTraining() {
  if (!state.hasSession || state.loading) return;
  setTraining(!state.training);
  send({ type: state.training ? 'train' : 'pause' });
  setStatus(state.training ? 'Training… (the page stays responsive: the work is in a Web Worker)' : 'Paused.');
}

$('train').addEventListener('click', toggleTraining);
$('reset').addEventListener('click', () => {
  if (mayDiscard('Reset')) startRun('reset');
});

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
  else if (word === '') clearAttention('type a word above.');
}
$('word').addEventListener('input', () => {
  clearTimeout(attentionTimer);
  attentionTimer = setTimeout(requestAttention, 150);
});

setupFiles({
  // A dropped text becomes the page's data once the worker accepts it (ready); a refused one leaves the old data.
  // A new text is an init (the worker keeps it for later resets).
  onText(text, name) {
    if (!mayDiscard(`Training on ${name}`)) return;
    state.pendingData = { text, name };
    if (!startRun('init')) state.pendingData = null;
  },
  // "read it as" is the run's --format: a new run, once the user agrees to lose the steps trained.
  onFormat() {
    if (!mayDiscard(`Reading the text as ${$('format').value}`)) return void ($('format').value = state.format);
    if (state.hasSession && !startRun('reset')) $('format').value = state.format;
  },
  onCheckpoint(bytes, name) {
    if (mayDiscard(`Loading ${name}`)) request({ type: 'load', bytes, name }, [bytes], `Loading ${name}…`);
  },
  onError: (message) => showError(message, 'file'),
});

// ------------------------------------------------------------------------------------------------ numbers and plots
const fixed = (v, digits) => (v == null ? '' : v.toFixed(digits));
function updateNumbers() {
  const last = state.losses[state.losses.length - 1];
  $('step').textContent = String(state.steps_done);
  $('steps-total').textContent = String(state.max_steps);
  const mean = state.means[state.means.length - 1];
  $('loss').textContent = state.diverged ? 'diverged' : last ? last[1].toFixed(4)
    : mean ? `${mean[1].toFixed(4)} (mean to step ${mean[0]})` : '';
  $('bigram').textContent = fixed(state.bigram, 4);
  $('val-loss').textContent = state.evaluating ? `evaluating at step ${state.evaluating}…` : fixed(state.val_loss, 4);
  $('ms-per-step').textContent = fixed(state.ms_per_step, 1);
  $('tokens-per-s').textContent = state.tokens_per_s == null ? '' : Math.round(state.tokens_per_s).toLocaleString('en');
}

// Progress arrives several times a second; the chart is drawn at most once a frame.
let frame = 0;
function redraw() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    state.chart = drawLossChart($('loss-chart'), state);
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
showBoxes(state);
updateNumbers();
redraw();
startRun('init');
