// Steps per second of the page's training in headless Chromium (one worker, the page's default config: the words GPT
// of `cppgrad-gpt train`), after a warm-up: bench/wasm/browser_speed.sh puts it beside native cppgrad.
//   node web/test/speed.mjs [--dist build-wasm/web/dist] [--chromium /usr/bin/chromium] [--warmup 100] [--steps 200]
// Prints one JSON object: {steps, seconds, steps_per_s, ms_per_step_page, chromium}. The time is the page's clock
// between the progress reports that cross step `warmup` and step `warmup + steps` (the worker reports after each chunk
// of steps, so both ends are chunk boundaries and the step counts are exact); no evaluation falls in between (the
// default eval_every is 500), so this is training steps alone, as the worker runs them for a user.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { launch, openPage, serve, startOver, waitFor } from './browser.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: join(repo, 'build-wasm', 'web', 'dist') },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
    warmup: { type: 'string', default: '100' },
    steps: { type: 'string', default: '200' },
  },
  strict: true,
});
const warmup = Number(values.warmup), steps = Number(values.steps);
if (!Number.isInteger(warmup) || warmup < 1 || !Number.isInteger(steps) || steps < 1 || warmup + steps >= 500) {
  console.error(`speed: --warmup and --steps must be positive whole numbers adding up to less than 500 (the first ` +
                `evaluation), got '${values.warmup}' and '${values.steps}'`);
  process.exit(2);
}

const errors = [];
const server = await serve(values.dist);
let chromium;
try {
  chromium = await launch({ chromium: values.chromium });
  const page = await openPage(chromium.browser, server.origin, errors);
  await waitFor(page, errors, 'window.cppgradPage.ready', 180, () => window.cppgradPage?.ready === true);
  await startOver(page, errors, warmup + steps + 20);
  // The page's clock and step count every 20 ms, recorded in the page: no round trip to node in the measurement.
  await page.evaluate(() => {
    window.speedSamples = [];
    setInterval(() => window.speedSamples.push([performance.now(), window.cppgradPage.steps_done]), 20);
  });
  await page.click('#train');
  await waitFor(page, errors, `step ${warmup + steps}`, 1800, (n) => window.cppgradPage.steps_done >= n, warmup + steps);
  const r = await page.evaluate((from, to) => {
    const a = window.speedSamples.find(([, s]) => s >= from), b = window.speedSamples.find(([, s]) => s >= to);
    return { steps: b[1] - a[1], seconds: (b[0] - a[0]) / 1000, ms_per_step_page: window.cppgradPage.ms_per_step };
  }, warmup, warmup + steps);
  if (errors.length) throw new Error(errors.join('; '));
  console.log(JSON.stringify({ ...r, steps_per_s: r.steps / r.seconds, chromium: await chromium.browser.version() }));
} catch (e) {
  console.error(`speed: FAILED: ${e.message}`);
  process.exitCode = 1;
} finally {
  await chromium?.close();
  await server.stop();
}
