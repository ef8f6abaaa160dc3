// The run's number boxes (#seed, #max-steps, #lr): what each takes, and a refusal shown next to the box. A bad value
// is never replaced by a default behind the user's back: the box is marked invalid, its message says why and what it
// takes, and no run starts from it until it is fixed (main.js keeps Train and Reset off meanwhile).

const $ = (id) => document.getElementById(id);

// A decimal number as a person types it ("0.002", "2e-3", "5"); Number() alone would also take "", " ", "0x10".
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

// Each box: its name in messages, and a check returning null or why the number is refused. The bounds:
//   seed: cppgrad-gpt takes any 64-bit seed, but a JavaScript number is exact only up to 2^53 - 1 (a bigger one
//     would reach the engine as another seed than the one typed);
//   steps: cppgrad-gpt's own bound (gpt::kMaxSteps); once the run has steps, more than it has done (the run grows:
//     train --resume --steps N), or the run's own;
//   learning rate: (0, 1]. cppgrad-gpt takes any positive rate; AdamW moves each weight by about the rate per step,
//     so past 1 a step moves weights of size ~0.02 by fifty times their size: no such run learns. 1e-4 to 1e-2 is the
//     useful range (train's default 5e-4; the page's test trains at 2e-3).
const MAX_SEED = Number.MAX_SAFE_INTEGER;
const MAX_STEPS = 1e9;
const MAX_LR = 1;
const boxes = {
  seed: {
    name: 'seed',
    check: (v) => (!Number.isInteger(v) || v < 0 || v > MAX_SEED ? `a whole number from 0 to ${MAX_SEED}` : null),
  },
  'max-steps': {
    name: 'steps',
    check: (v, run) => {
      if (!Number.isInteger(v) || v < 1 || v > MAX_STEPS) return `a whole number from 1 to ${MAX_STEPS.toLocaleString('en')}`;
      if (run.steps_done > 0 && v !== run.max_steps && v <= run.steps_done)
        return `more than the ${run.steps_done} steps the run has done (press Reset for a new, shorter run)`;
      return null;
    },
  },
  lr: {
    name: 'learning rate',
    check: (v) => (!(v > 0 && v <= MAX_LR) ? `a number above 0 and at most ${MAX_LR}, e.g. 0.0005 (train's default)` : null),
  },
};
export const boxIds = Object.keys(boxes);

// The box's number, or {error} naming what was typed and what the box takes. `run`: {steps_done, max_steps}.
export function readBox(id, run) {
  const text = $(id).value.trim();
  const v = DECIMAL.test(text) ? Number(text) : NaN;
  const wanted = boxes[id].check(v, run);
  if (wanted === null) return { value: v };
  const shown = text === '' ? 'an empty box' : `'${text.length > 24 ? `${text.slice(0, 24)}…` : text}'`;
  return { error: `${boxes[id].name}: ${shown} is refused; give ${wanted}` };
}

// Shows each box's refusal beside it (or clears it); returns true when every box holds a value the page takes.
export function showBoxes(run) {
  let ok = true;
  for (const id of boxIds) {
    const r = readBox(id, run);
    $(id).setAttribute('aria-invalid', String(r.error !== undefined));
    $(`${id}-error`).textContent = r.error ?? '';
    $(`${id}-error`).hidden = r.error === undefined;
    ok &&= r.error === undefined;
  }
  return ok;
}
