// The autograd graph as SVG: nodes in layers from the inputs (top) to the loss (bottom), each box showing the
// tensor's op, shape, value and gradient after backward().

const NS = 'http://www.w3.org/2000/svg';
const BOX_W = 252, LINE = 15, PAD = 6, COL_GAP = 24, ROW_GAP = 40, SHOWN = 4;

function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

// Numbers in a box are short (two decimals); the tooltip gives them to four significant digits.
// JSON has no infinities: the engine's writer turns the causal mask's -inf into null, the only non-finite value here.
const num = (v) => (v == null ? '−∞' : Math.abs(v) >= 1e3 || (v !== 0 && Math.abs(v) < 1e-2) ? v.toExponential(1)
  : v.toFixed(2));
const full = (v) => (v == null ? '−∞' : v.toPrecision(4));

const shapeText = (shape) => (shape.length ? `(${shape.join(',')})` : 'scalar');

// The first few numbers of a tensor, with an ellipsis when there are more (the full list is in the tooltip).
function preview(values, shape) {
  const size = shape.reduce((a, b) => a * b, 1);
  const shown = values.slice(0, SHOWN).map(num).join(', ');
  return size === 1 ? shown : `[${shown}${size > SHOWN ? ', …' : ''}]`;
}

// Layer of each node: one more than its deepest input (Kahn's order, no recursion); a leaf then moves down to just
// above its first user.
function layers(nodes, edges) {
  const layer = new Map(nodes.map((n) => [n.id, 0]));
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  const out = new Map(nodes.map((n) => [n.id, []]));
  for (const [from, to] of edges) {
    if (!out.has(from) || !indegree.has(to)) continue;
    out.get(from).push(to);
    indegree.set(to, indegree.get(to) + 1);
  }
  const queue = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  while (queue.length) {
    const id = queue.shift();
    for (const to of out.get(id)) {
      layer.set(to, Math.max(layer.get(to), layer.get(id) + 1));
      indegree.set(to, indegree.get(to) - 1);
      if (indegree.get(to) === 0) queue.push(to);
    }
  }
  // A leaf sits just above its first user, as micrograd draws a neuron's bias beside the sum it joins.
  for (const n of nodes) {
    const users = out.get(n.id);
    const fed = edges.some(([, to]) => to === n.id);
    if (!fed && users.length) layer.set(n.id, Math.min(...users.map((u) => layer.get(u))) - 1);
  }
  return layer;
}

// graph: {nodes:[{id, label, op, shape, value, grad}], edges:[[from, to]]} with edges from an input to its user.
export function drawGraph(svg, graph) {
  svg.replaceChildren();
  const { nodes, edges } = graph;
  const layer = layers(nodes, edges);
  const inputs = new Map(nodes.map((n) => [n.id, []]));
  for (const [from, to] of edges) inputs.get(to)?.push(from);

  // Rows by layer, top to bottom (inputs first, the loss last). Each node wants to sit under the mean of its inputs,
  // so a chain runs straight down and a long edge passes beside it; a sweep then keeps boxes from overlapping.
  const rows = [];
  for (const n of nodes) (rows[layer.get(n.id)] ??= []).push(n);
  const boxH = PAD * 2 + LINE * 4, slot = BOX_W + COL_GAP;
  const pos = new Map();
  let width = 0, height = 0;
  rows.filter(Boolean).forEach((row, i) => {
    const y = 10 + i * (boxH + ROW_GAP);
    const want = new Map(row.map((n, j) => {
      const xs = inputs.get(n.id).map((id) => pos.get(id)?.x).filter((x) => x != null);
      return [n.id, xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 10 + j * slot];
    }));
    let next = 10;
    for (const n of [...row].sort((p, q) => want.get(p.id) - want.get(q.id))) {
      const x = Math.max(next, want.get(n.id));
      pos.set(n.id, { x, y });
      next = x + slot;
      width = Math.max(width, x + BOX_W + 10), height = Math.max(height, y + boxH + 10);
    }
  });
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);

  const defs = el('defs', {});
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
                                orient: 'auto-start-reverse' });
  marker.append(el('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#8a94a6', stroke: 'none' }));
  defs.append(marker);
  svg.append(defs);

  // Each input enters its user at its own point along the top edge, in the inputs' left-to-right order.
  const entry = (from, to) => {
    const sources = inputs.get(to).filter((i) => pos.has(i)).sort((p, q) => pos.get(p).x - pos.get(q).x);
    return (BOX_W * (sources.indexOf(from) + 1)) / (sources.length + 1);
  };
  for (const [from, to] of edges) {
    const a = pos.get(from), b = pos.get(to);
    if (!a || !b) continue;
    const x1 = a.x + BOX_W / 2, y1 = a.y + boxH, x2 = b.x + entry(from, to), y2 = b.y, mid = (y1 + y2) / 2;
    svg.append(el('path', { d: `M${x1},${y1} C${x1},${mid} ${x2},${mid} ${x2},${y2}`, 'marker-end': 'url(#arrow)' }));
  }

  const hasUsers = new Set(edges.map((e) => e[0]));
  for (const n of nodes) {
    const { x, y } = pos.get(n.id);
    const leaf = inputs.get(n.id).length === 0, output = !hasUsers.has(n.id);
    const g = el('g', {});
    g.append(el('title', {}, `${n.label} = ${n.op || 'leaf'}  ${shapeText(n.shape)}\n` +
                              `value: ${n.value.map(full).join(', ')}\ngrad:  ${n.grad.map(full).join(', ')}`));
    g.append(el('rect', { x, y, width: BOX_W, height: boxH, fill: leaf ? '#e3edfb' : output ? '#fdebd3' : '#ffffff' }));
    const line = (i, cls, text) => g.append(el('text', { x: x + PAD, y: y + PAD + LINE * (i + 0.75), class: cls }, text));
    line(0, 'label', n.label);
    g.append(el('text', { x: x + BOX_W - PAD, y: y + PAD + LINE * 0.75, class: 'op', 'text-anchor': 'end' },
                `${n.op && n.op !== n.label ? n.op : leaf && !n.op ? 'leaf' : ''} ${shapeText(n.shape)}`));
    line(1, 'value', `value ${preview(n.value, n.shape)}`);
    line(2, 'grad', `grad  ${preview(n.grad, n.shape)}`);
    line(3, 'op', leaf ? 'leaf: backward ends here' : output ? 'output: backward starts at 1' : '');
    svg.append(g);
  }
}

export const captions = {
  expression: 'A few numbers and the operations on them, as the engine recorded them. After backward(), each box ' +
    'holds d(output)/d(box): the chain rule, walked from the output (orange, at the bottom) up to the inputs (blue). A value ' +
    'used twice adds up both gradients. This is micrograd\'s lesson, on the same engine that trains the GPT.',
  head: 'One attention head on a tiny input: the projections q, k and v, the scores q·kᵀ/√d, the causal mask, the ' +
    'softmax, the weighted sum of v, and a loss. After backward(), every box holds the loss\'s gradient with ' +
    'respect to it, which is what the optimizer uses to change the weights (blue leaves).',
};
