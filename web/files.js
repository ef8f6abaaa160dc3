// The files a user hands the page: a text to train on (dropped or chosen, read as lines or running text) and a
// checkpoint to load. Each is size-checked before it is read, so a wrong file is refused with a reason, not read whole.

const $ = (id) => document.getElementById(id);

// A text beyond this would not fit the worker's memory next to the model (wasm32: 4 GB at most, far less in practice).
const MAX_TEXT_BYTES = 64 * 1024 * 1024;
// The words model's checkpoint is under 1 MB; GPT-2 small's is 0.5 GB, too big to train here anyway.
const MAX_CHECKPOINT_BYTES = 1024 * 1024 * 1024;
const isCheckpoint = (file) => /\.(ckpt|safetensors)$/i.test(file.name);

// handlers: onText(text, name), onFormat(), onCheckpoint(ArrayBuffer, name), onError(message).
export function setupFiles(handlers) {
  const readText = async (file) => {
    if (file.size > MAX_TEXT_BYTES)
      return handlers.onError(`${file.name} has ${file.size.toLocaleString('en')} bytes; the page takes texts up to ` +
                              `${MAX_TEXT_BYTES.toLocaleString('en')} (native cppgrad-gpt train reads bigger ones)`);
    if (file.size === 0) return handlers.onError(`${file.name} is empty: drop a text file with some lines or sentences`);
    try {
      handlers.onText(await file.text(), file.name);
    } catch (e) {
      handlers.onError(`${file.name} could not be read: ${e.message}`);
    }
  };
  const readCheckpoint = async (file) => {
    if (file.size > MAX_CHECKPOINT_BYTES)
      return handlers.onError(`${file.name} has ${file.size.toLocaleString('en')} bytes, more than the page loads`);
    try {
      handlers.onCheckpoint(await file.arrayBuffer(), file.name);
    } catch (e) {
      handlers.onError(`${file.name} could not be read: ${e.message}`);
    }
  };
  const take = (file) => (isCheckpoint(file) ? readCheckpoint(file) : readText(file));

  $('text-file').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    if (file) readText(file);
    e.target.value = '';  // choosing the same file again is a change too
  });
  $('load').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    if (file) readCheckpoint(file);
    e.target.value = '';
  });
  $('format').addEventListener('change', () => handlers.onFormat());

  // A file dropped anywhere but the drop area would make the browser open it and leave the page (and its training).
  for (const type of ['dragover', 'drop']) window.addEventListener(type, (e) => e.preventDefault());
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const file = e.dataTransfer?.files?.[0];
    if (file) take(file);
  });
}
