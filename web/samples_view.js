// The samples list and, for a clicked sample, --explain's table: each chosen token with the five likeliest tokens
// before the filters (the model's own odds) and after temperature, top-k and top-p (the odds it was drawn from).

// samples: [{text, steps:[{token, prob, raw_top:[{label, prob}], filtered_top:[...]}]}] as the worker sends them.
export function showSamples(list, explain, samples) {
  list.replaceChildren();
  explain.hidden = true;
  samples.forEach((sample, i) => {
    const li = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = sample.text === '' ? '(empty)' : sample.text;
    button.setAttribute('aria-pressed', 'false');
    button.title = 'show how each token was chosen';
    button.addEventListener('click', () => {
      for (const b of list.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b === button));
      showExplain(explain, sample, i + 1);
    });
    li.append(button);
    list.append(li);
  });
}

function showExplain(explain, sample, number) {
  const table = document.createElement('table');
  const caption = table.createCaption();
  caption.textContent = `Sample ${number}: "${sample.text}", one row per token drawn (a character, or a BPE model's token; highlighted: the one drawn)`;
  const head = table.createTHead().insertRow();
  for (const title of ['drawn', 'p (after filters)', 'the model\'s five likeliest', 'after temperature, top-k, top-p']) {
    const th = document.createElement('th');
    th.textContent = title;
    head.append(th);
  }
  const body = table.createTBody();
  for (const step of sample.steps) {
    const row = body.insertRow();
    const token = row.insertCell();
    token.className = 'token';
    token.textContent = step.token;
    row.insertCell().textContent = step.prob.toFixed(3);
    row.insertCell().append(...chips(step.raw_top, step.token));
    row.insertCell().append(...chips(step.filtered_top, step.token));
  }
  explain.replaceChildren(table);
  explain.hidden = false;
}

// A top-5 list as "label prob" chips; a token the filters removed has probability 0 and is left out, as the CLI does.
function chips(top, chosen) {
  return top.filter((c) => c.prob > 0).map((c) => {
    const span = document.createElement('span');
    span.className = c.label === chosen ? 'chip chosen' : 'chip';
    span.textContent = `${c.label} ${c.prob.toFixed(3)}`;
    return span;
  });
}
