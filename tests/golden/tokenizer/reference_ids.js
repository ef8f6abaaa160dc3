#!/usr/bin/env node
// The reference token ids of GPT-2's tokenizer for text files: what cppgrad's `tokenize encode --tokenizer gpt2`
// must print for the same bytes (ids separated by one space, then a newline; an empty file gives an empty line).
//
//   node reference_ids.js FILE                      the ids of FILE on stdout
//   node reference_ids.js --out-dir DIR FILE...     DIR/<name of FILE>.ids for each FILE
//   node reference_ids.js --encoder gpt-3-encoder FILE
//
// --encoder tiktoken (the default, the reference): npm's tiktoken, OpenAI's Rust core compiled to WebAssembly, its
// `gpt2` encoding, encode_ordinary (so a literal "<|endoftext|>" in the text is plain text, as nanoGPT's prepare.py
// reads it). --encoder gpt-3-encoder: npm's gpt-3-encoder, a JavaScript port whose regular expression follows
// JavaScript's \s (it differs from the Rust core where the text has U+0085 or U+FEFF: see tests/golden/README.md).
// The packages are the ones tests/golden/tokenizer/package-lock.json pins (`npm ci` there; .ci/install-deps.sh).
//
// Each file is read as UTF-8 and refused (exit 1, naming the file and the byte) where it is not: both encoders take
// text, and a decoder that replaced a bad byte by U+FFFD would give ids for other bytes than the file's. A leading
// byte order mark is kept as the character U+FEFF, as cppgrad reads it.
"use strict";
const fs = require("fs");
const path = require("path");

const usage = "usage: node reference_ids.js [--encoder tiktoken|gpt-3-encoder] [--out-dir DIR] FILE...";

function parseArgs(argv) {
  const args = { encoder: "tiktoken", outDir: null, files: [] };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === "--encoder") args.encoder = argv[++i];
    else if (argv[i] === "--out-dir") args.outDir = argv[++i];
    else if (argv[i].startsWith("--")) throw new Error(`unknown flag '${argv[i]}'\n${usage}`);
    else args.files.push(argv[i]);
  }
  if (!["tiktoken", "gpt-3-encoder"].includes(args.encoder))
    throw new Error(`--encoder '${args.encoder}': expected tiktoken or gpt-3-encoder`);
  if (args.files.length === 0 || (args.files.length > 1 && args.outDir === null)) throw new Error(usage);
  return args;
}

// A function from a string to its ids (an array of numbers).
function makeEncoder(name) {
  if (name === "gpt-3-encoder") return require("gpt-3-encoder").encode;
  const enc = require("tiktoken").get_encoding("gpt2");
  return (text) => enc.encode_ordinary(text);
}

function readUtf8(file) {
  const bytes = fs.readFileSync(file);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (e) {
    throw new Error(`${file}: not UTF-8 text (${e.message}); the references read text only`);
  }
}

// The ids as cppgrad prints them: decimal, one space between two, a newline after the last.
function idsText(ids) {
  return Array.from(ids).join(" ") + "\n";
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const encode = makeEncoder(args.encoder);
  for (const file of args.files) {
    const text = idsText(encode(readUtf8(file)));
    if (args.outDir === null) process.stdout.write(text);
    else fs.writeFileSync(path.join(args.outDir, path.basename(file) + ".ids"), text);
  }
}

try {
  main();
} catch (e) {
  process.stderr.write(`reference_ids.js: ${e.message}\n`);
  process.exit(1);
}
