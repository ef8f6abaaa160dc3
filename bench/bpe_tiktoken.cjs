// npm tiktoken's encoding speed on a text file, the figure bench_bpe.cpp's BM_BpeEncodeGpt2 is compared with:
//   NODE_PATH=tests/golden/tokenizer/node_modules taskset -c 0 node bench/bpe_tiktoken.cjs kjv.txt
// (.ci/install-deps.sh puts the pinned tiktoken there.)
// Times encode_ordinary alone (the file already read, the encoding already built), as the C++ benchmark does.
const { get_encoding } = require("tiktoken");
const fs = require("fs");

const text = fs.readFileSync(process.argv[2], "utf8");
const enc = get_encoding("gpt2");
const start = process.hrtime.bigint();
const ids = enc.encode_ordinary(text);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(`tiktoken gpt2: ${ids.length} ids in ${seconds.toFixed(3)} s: ` +
            `${(Buffer.byteLength(text) / 1e6 / seconds).toFixed(2)} MB/s`);
enc.free();
