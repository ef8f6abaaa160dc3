// Linked into the WebAssembly build's programs (--pre-js, cmake/wasm.cmake): under node, the program's getenv sees
// node's environment, as a native program sees its own (emscripten otherwise gives it a fixed one). ctest's
// GoogleTest shards and CPPGRAD_GOLDEN_DIR reach the tests this way.
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () {
  if (typeof process === 'object' && process.env) Object.assign(ENV, process.env);
});
