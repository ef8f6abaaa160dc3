// The page's two tabs (#tab-train, #tab-graph and their panels #panel-train, #panel-graph), keyboard-usable as a tab
// list should be: a click or the arrow keys select one.
const $ = (id) => document.getElementById(id);
const names = ['train', 'graph'];

// onSelect(name) runs after a tab is shown (the graph tab asks for its graph, the training tab redraws its chart).
export function setupTabs(onSelect) {
  const select = (name) => {
    for (const tab of names) {
      const on = tab === name;
      $(`tab-${tab}`).setAttribute('aria-selected', String(on));
      $(`tab-${tab}`).tabIndex = on ? 0 : -1;
      $(`panel-${tab}`).hidden = !on;
    }
    onSelect(name);
  };
  for (const tab of names) $(`tab-${tab}`).addEventListener('click', () => select(tab));
  $('tab-train').parentElement.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const next = $('tab-train').getAttribute('aria-selected') === 'true' ? 'graph' : 'train';
    select(next);
    $(`tab-${next}`).focus();
  });
}
