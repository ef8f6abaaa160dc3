// What the node tests of the page's module share: the test's one-line failure, the native cppgrad-gpt beside the
// module (NATIVE_BIN_DIR, -DCPPGRAD_NATIVE_BIN_DIR), and the module itself loaded as the worker loads it.
'use strict';
const fs = require('fs');
const path = require('path');
const {execFileSync} = require('child_process');

// Ends the test with "<test>: <message>" and status 1.
function failer(test) {
  return (message) => {
    console.error(`${test}: ${message}`);
    process.exit(1);
  };
}

// native(args, env): runs `NATIVE_BIN_DIR/cppgrad-gpt args` and returns its stdout; fails at once if it is not built.
function nativeProgram(nativeBin, fail) {
  const cppgradGpt = path.join(nativeBin, 'cppgrad-gpt');
  if (!fs.existsSync(cppgradGpt))
    fail(`${cppgradGpt} is missing: build the native tree first (cmake -S . -B build && cmake --build build -j2), or ` +
         `point -DCPPGRAD_NATIVE_BIN_DIR at its bin/ directory`);
  return (args, env = process.env) => execFileSync(cppgradGpt, args, {env, encoding: 'utf8'});
}

// The page's module (cppgrad_web.js / .wasm) under node; options as createCppgrad takes them (preRun, ...).
function loadModule(moduleJs, options = {}) {
  const createCppgrad = require(path.resolve(moduleJs));
  return createCppgrad({wasmBinary: fs.readFileSync(path.resolve(moduleJs).replace(/\.js$/, '.wasm')), ...options});
}

module.exports = {failer, nativeProgram, loadModule};
