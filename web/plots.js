// The loss chart and the attention heatmaps, drawn with the canvas 2D context alone (no library).

// A canvas sized to its CSS box at the screen's pixel density; returns the context in CSS pixels and the size.
function fitCanvas(canvas, cssWidth, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(cssWidth)), h = Math.max(1, Math.round(cssHeight));
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { ctx, w, h };
}

// Round tick positions covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
function ticks(lo, hi, count) {
  const span = hi - lo || 1;
  const raw = span / count, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toFixed(10));
  return out;
}

// A centred moving average (the window shrinks at the ends): unlike an exponential average it does not lag behind a
// loss that falls fast, so the line stays in the middle of the points.
function smooth(values, half) {
  const sums = [0];
  for (const v of values) sums.push(sums[sums.length - 1] + v);
  return values.map((_, i) => {
    const k = Math.min(half, i, values.length - 1 - i);
    return (sums[i + k + 1] - sums[i - k]) / (2 * k + 1);
  });
}

const colours = { raw: 'rgba(31, 95, 191, 0.22)', line: '#1f5fbf', val: '#e07b00', bigram: '#b3261e', axis: '#5b6473' };

// losses: [[step, loss]...] per training step; vals: [[step, val_loss]...]; means: [[step, mean training loss since
// the evaluation before]...] (a loaded checkpoint's history when it has no steps' losses); bigram: a number or null;
// historyFrom: the step the axis starts at (0, unless the run knows nothing of the steps before it, as a checkpoint
// resumed without history). Returns the axis ranges drawn, and the points, for the page's snapshot.
export function drawLossChart(canvas, { losses, vals, means = [], bigram, historyFrom = 0 }) {
  const { ctx, w, h } = fitCanvas(canvas, canvas.clientWidth, canvas.clientHeight);
  const m = { left: 46, right: 12, top: 28, bottom: 34 };
  ctx.font = '12px system-ui, sans-serif';
  if (losses.length === 0 && vals.length === 0 && means.length === 0) {
    ctx.fillStyle = colours.axis;
    ctx.fillText('Press Train: each step\'s loss appears here.', m.left + 10, h / 2);
    return { x: null, points: 0 };
  }
  // A diverged step never reaches the chart (its loss is refused), but a value that is not finite must not stretch
  // the axis to NaN either.
  const ys = [...losses, ...vals, ...means].map((p) => p[1]).filter(Number.isFinite);
  if (bigram != null) ys.push(bigram);
  let ylo = Math.min(...ys), yhi = Math.max(...ys);
  const pad = (yhi - ylo) * 0.06 || 0.1;
  ylo -= pad, yhi += pad;
  const last = Math.max(...[losses, vals, means].filter((a) => a.length).map((a) => a[a.length - 1][0]));
  const xlo = historyFrom, xhi = Math.max(xlo + 50, last);
  const x = (s) => m.left + ((s - xlo) / (xhi - xlo)) * (w - m.left - m.right);
  const y = (v) => m.top + (1 - (v - ylo) / (yhi - ylo)) * (h - m.top - m.bottom);

  // Axes and grid.
  ctx.strokeStyle = '#e4e8ef';
  ctx.fillStyle = colours.axis;
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of ticks(ylo, yhi, 6)) {
    ctx.beginPath(); ctx.moveTo(m.left, y(t)); ctx.lineTo(w - m.right, y(t)); ctx.stroke();
    ctx.fillText(t.toFixed(1), m.left - 6, y(t));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of ticks(xlo, xhi, 6)) ctx.fillText(String(t), x(t), h - m.bottom + 6);
  ctx.fillText('step', (m.left + w - m.right) / 2, h - 14);
  ctx.save();
  ctx.translate(12, (m.top + h - m.bottom) / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText('loss (nats per token)', 0, -6);
  ctx.restore();

  // The raw losses faint, the smoothed line over them.
  ctx.fillStyle = colours.raw;
  for (const [s, v] of losses) ctx.fillRect(x(s) - 1.5, y(v) - 1.5, 3, 3);
  const sm = smooth(losses.map((p) => p[1]), Math.min(25, Math.max(2, Math.round(losses.length / 60))));
  ctx.strokeStyle = colours.line;
  ctx.lineWidth = 2;
  ctx.beginPath();
  losses.forEach(([s], i) => (i ? ctx.lineTo(x(s), y(sm[i])) : ctx.moveTo(x(s), y(sm[i]))));
  ctx.stroke();
  ctx.lineWidth = 1;

  // A native checkpoint's history: the mean training loss of each interval between evaluations, as a dashed line.
  if (means.length) {
    ctx.strokeStyle = colours.line;
    ctx.fillStyle = colours.line;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    means.forEach(([s, v], i) => (i ? ctx.lineTo(x(s), y(v)) : ctx.moveTo(x(s), y(v))));
    ctx.stroke();
    ctx.setLineDash([]);
    for (const [s, v] of means) ctx.fillRect(x(s) - 3, y(v) - 3, 6, 6);
  }

  if (bigram != null) {
    ctx.strokeStyle = colours.bigram;
    ctx.setLineDash([6, 4]);
    ctx.beginPath(); ctx.moveTo(m.left, y(bigram)); ctx.lineTo(w - m.right, y(bigram)); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = colours.bigram;
    // Labelled at the left, where the young model's loss is still far above it.
    ctx.textAlign = 'left';
    ctx.textBaseline = 'bottom';
    ctx.fillText(`bigram baseline ${bigram.toFixed(3)}`, m.left + 6, y(bigram) - 3);
  }
  for (const [s, v] of vals) {
    ctx.fillStyle = colours.val;
    ctx.strokeStyle = '#fff';
    ctx.beginPath(); ctx.arc(x(s), y(v), 5, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
  }

  // Legend along the top.
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  let lx = m.left;
  const item = (draw, text) => {
    draw(lx, 12);
    ctx.fillStyle = colours.axis;
    ctx.fillText(text, lx + 18, 12);
    lx += 26 + ctx.measureText(text).width;
  };
  item((px, py) => { ctx.fillStyle = colours.line; ctx.fillRect(px, py - 1, 14, 3); }, 'training loss (smoothed)');
  item((px, py) => { ctx.fillStyle = colours.val; ctx.beginPath(); ctx.arc(px + 7, py, 5, 0, 2 * Math.PI); ctx.fill(); },
       'validation loss');
  item((px, py) => { ctx.strokeStyle = colours.bigram; ctx.setLineDash([6, 4]); ctx.beginPath(); ctx.moveTo(px, py);
                     ctx.lineTo(px + 14, py); ctx.stroke(); ctx.setLineDash([]); }, 'bigram');
  if (means.length) item((px, py) => { ctx.fillStyle = colours.line; ctx.fillRect(px + 4, py - 3, 6, 6); },
                         'mean training loss per interval (checkpoint)');
  return { x: [xlo, xhi], points: losses.length + vals.length + means.length };
}

// A perceptual colour scale (viridis, sampled at 5 stops) for an attention weight in [0, 1].
const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
// A weight that is not a number (weights that diverged) is grey, not a colour of the scale.
export function weightColour(p) {
  if (!Number.isFinite(p)) return '#9aa0aa';
  const t = Math.min(1, Math.max(0, p)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(t)), f = t - i;
  const c = stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// The legend of the maps: 160 x 28 CSS pixels, set here because fitCanvas grows the canvas's own size on a dense screen.
export function drawColourScale(canvas) {
  Object.assign(canvas.style, { width: '160px', height: '28px' });
  const { ctx, w, h } = fitCanvas(canvas, 160, 28);
  for (let i = 0; i < w - 40; i++) {
    ctx.fillStyle = weightColour(i / (w - 41));
    ctx.fillRect(20 + i, 2, 1, 12);
  }
  ctx.fillStyle = colours.axis;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.fillText('0', 10, 2);
  ctx.fillText('1', w - 16, 2);
  ctx.textAlign = 'center';
  ctx.fillText('attention weight', w / 2, h - 12);
}

// Draws every layer x head map of `att` ({tokens, layers, heads, T, maps}) into `container`, one canvas each, making
// the canvases again only when the shape or the tokens change so a redraw during training does not flicker.
export function drawAttention(container, att) {
  const key = `${att.layers}x${att.heads}x${att.T}:${att.tokens.join('\u0001')}`;
  if (container.dataset.key !== key) {
    container.dataset.key = key;
    container.replaceChildren();
    container.style.gridTemplateColumns = `repeat(${att.heads}, max-content)`;
    const room = (container.clientWidth || 480) / att.heads - 8;
    const cell = Math.max(7, Math.min(22, Math.floor((room - 24) / att.T)));
    for (let l = 0; l < att.layers; l++) {
      for (let hd = 0; hd < att.heads; hd++) {
        const fig = document.createElement('figure');
        const cap = document.createElement('figcaption');
        cap.textContent = `layer ${l + 1}, head ${hd + 1}`;
        const canvas = document.createElement('canvas');
        canvas.dataset.layer = l, canvas.dataset.head = hd, canvas.dataset.cell = cell;
        canvas.style.width = `${24 + cell * att.T}px`;
        canvas.style.height = `${16 + cell * att.T}px`;
        canvas.setAttribute('role', 'img');
        canvas.setAttribute('aria-label', `attention of layer ${l + 1}, head ${hd + 1}`);
        canvas.addEventListener('mousemove', (e) => describeCell(canvas, e));
        fig.append(cap, canvas);
        container.append(fig);
      }
    }
  }
  container.att = att;
  for (const canvas of container.querySelectorAll('canvas')) drawHead(canvas, att);
}

// One head's T x T map: row = the position reading (query), column = the position read (key). Future positions,
// which the causal mask hides, stay blank.
function drawHead(canvas, att) {
  const T = att.T, cell = +canvas.dataset.cell, left = 24, top = 16;
  const { ctx } = fitCanvas(canvas, left + cell * T, top + cell * T);
  const base = (+canvas.dataset.layer * att.heads + +canvas.dataset.head) * T * T;
  for (let r = 0; r < T; r++) {
    for (let c = 0; c < T; c++) {
      ctx.fillStyle = c > r ? '#eef0f4' : weightColour(att.maps[base + r * T + c]);
      ctx.fillRect(left + c * cell, top + r * cell, cell - 0.5, cell - 0.5);
    }
  }
  ctx.fillStyle = colours.axis;
  ctx.font = `${Math.min(11, cell)}px ui-monospace, monospace`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'bottom';
  att.tokens.forEach((t, i) => ctx.fillText(shortLabel(t), left + (i + 0.5) * cell, top - 2));
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  att.tokens.forEach((t, i) => ctx.fillText(shortLabel(t), left - 3, top + (i + 0.5) * cell));
}

// Tick labels stay within a cell: <b> becomes a bullet, anything longer is cut.
function shortLabel(t) {
  return t === '<b>' ? '•' : [...t].length > 2 ? [...t].slice(0, 2).join('') : t;
}

// The hovered cell in words, as the canvas's tooltip.
function describeCell(canvas, e) {
  const att = canvas.parentElement?.parentElement?.att;
  if (!att) return;
  const cell = +canvas.dataset.cell, rect = canvas.getBoundingClientRect();
  const c = Math.floor((e.clientX - rect.left - 24) / cell), r = Math.floor((e.clientY - rect.top - 16) / cell);
  if (r < 0 || c < 0 || r >= att.T || c >= att.T) return void (canvas.title = '');
  const base = (+canvas.dataset.layer * att.heads + +canvas.dataset.head) * att.T * att.T;
  canvas.title = c > r ? `position ${r + 1} cannot read ahead`
    : `'${att.tokens[r]}' (position ${r + 1}) reads '${att.tokens[c]}' (position ${c + 1}) with weight ` +
      att.maps[base + r * att.T + c].toFixed(3);
}
