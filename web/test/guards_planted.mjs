// Proves that guards.test.mjs can fail: for each of its cases, a copy of the page (build-wasm/web/dist) with that
// case's fix undone (one line of the page changed back to what the page did before issue 40), on which
// guards.test.mjs must fail with that case's own message. A fault it does not catch, or one it catches for another
// reason, fails this test.
//   node web/test/guards_planted.mjs [--dist build-wasm/web/dist] [--chromium /usr/bin/chromium]
// Each fault is a literal edit of one file; if the line it undoes has changed, this says so (update the fault).
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

// [row of the page table, file, the fix's text, the fault in its place, guards.test's failure for it]
const faults = [
  ['a phone scrolls sideways', 'style.css', 'overflow-x: auto; max-width: 100%;', '',
   /at 390 px the page scrolls sideways/],
  ['a learning rate of 1e9 is taken', 'boxes.js', '!(v > 0 && v <= MAX_LR)', '!(v > 0)',
   /#lr = '1e9' is not refused beside the box/],
  ['a refused text becomes the worker\'s data', 'worker.js', '  const info = state.page.init(JSON.stringify(c));',
   '  [state.text, state.name] = data === null ? [null, null] : [data.text, data.name];\n' +
   '  const info = state.page.init(JSON.stringify(c));',
   /"read it as" text trains on another file: .*program\.bin/],
  ['an error stays after a success', 'main.js',
   "  if (state.errorFrom !== null && (request === 'ready' || request === state.errorFrom)) setStatus(restingStatus());",
   '', /waiting for the error cleared by the next word/],
  ['an evaluation without a word', 'worker.js', "postMessage({type: 'evaluating', step: next});", '',
   /no notice while the evaluation at step 30 ran/],
  ['trained steps thrown away unasked', 'main.js', '  return n === 0 || window.confirm(',
   '  return true || window.confirm(', /Reset threw away trained steps without asking/],
  ['a loaded checkpoint without its losses', 'main.js', '  state.losses = losses.map((s) => [s.step, s.loss]);',
   '  state.losses = [];', /the checkpoint brought 0 losses, not its 30/],
  ['a diverged run trains on', 'main.js', '!finished && boxesFine && state.diverged === null;', '!finished && boxesFine;',
   /waiting for the run diverged/],
  ['errors in command-line flags', 'worker.js', 'message: inPageWords(e.message)', 'message: e.message',
   /errors that name command-line flags: .*--batch-size/],
];

function run(args) {
  return new Promise((ok) => {
    execFile(process.execPath, [join(here, 'guards.test.mjs'), ...args], { timeout: 300000 },
             (error, stdout, stderr) => ok({ failed: error !== null, out: `${stdout}${stderr}` }));
  });
}

async function main() {
  const { values: o } = parseArgs({
    options: { dist: { type: 'string', default: join(repo, 'build-wasm', 'web', 'dist') },
               chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' } },
    strict: true,
  });
  const scratch = mkdtempSync(join(tmpdir(), 'cppgrad-guards-planted-'));
  const missed = [];
  try {
    for (const [what, file, fix, fault, expected] of faults) {
      const dist = join(scratch, String(faults.findIndex((f) => f[0] === what)));
      cpSync(o.dist, dist, { recursive: true });
      const source = readFileSync(join(dist, file), 'utf8');
      if (!source.includes(fix)) throw new Error(`${file} no longer has the line the fault '${what}' undoes: ${fix}`);
      writeFileSync(join(dist, file), source.replace(fix, fault));
      const r = await run(['--dist', dist, '--chromium', o.chromium]);
      const said = r.out.split('\n').find((l) => l.includes('FAILED')) ?? '(no failure)';
      console.log(`guards_planted: ${what}: ${said}`);
      if (!r.failed || !expected.test(said)) missed.push(`${what} (expected ${expected}, got: ${said})`);
      rmSync(dist, { recursive: true, force: true });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  if (missed.length) throw new Error(`guards.test.mjs missed: ${missed.join('; ')}`);
}

main().then(() => console.log(`${faults.length} planted faults caught`), (e) => {
  console.error(`guards_planted: FAILED: ${e.message}`);
  process.exit(1);
});
