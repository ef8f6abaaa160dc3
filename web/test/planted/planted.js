// The fault is in the worker, where the page's own network requests are made: the test must see them there too.
new Worker('planted_worker.js');
