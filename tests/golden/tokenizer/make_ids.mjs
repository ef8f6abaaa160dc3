// Writes gpt2_ids.json beside this file: tiktoken's "gpt2" ids (OpenAI's Rust core, run by npm's tiktoken as
// WebAssembly) for hostile strings and a King James Bible excerpt, which tests/data/test_bpe_gpt2.cpp must match.
//   bash .ci/install-deps.sh    (npm ci beside this file: the pinned tiktoken in its node_modules/)
//   node tests/golden/tokenizer/make_ids.mjs
// Each case is {name, text, ids} with ids = encode_ordinary(text) (special tokens' text is ordinary text), except
// those with "special": true, whose ids are encode(text, "all") (<|endoftext|> becomes 50256).
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { get_encoding } = require("tiktoken");
const here = dirname(fileURLToPath(import.meta.url));

const cases = [
  ["hello", "Hello world"],
  ["empty", ""],
  ["one space", " "],
  ["newlines", "\n\n\n"],
  ["mixed white space", "\t \t\n  x  \n\n  y\r\n\r\nz   "],
  ["space runs", "a" + " ".repeat(10) + "b" + " ".repeat(3) + "\n" + " ".repeat(7)],
  ["contractions", "I'm you're he's it'd we'll they've don't"],
  ["contractions upper", "I'M YOU'RE HE'S IT'D WE'LL THEY'VE DON'T 'S 'T 'Re 'vE ''s'''t"],
  ["combining marks", "e\u0301 cafe\u0301 n\u0303o Z\u0351\u0362\u0337a\u0334\u0322lgo\u0308"],
  ["emoji zwj", "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466} \u{1F44D}\u{1F3FD} \u{1F3F3}\uFE0F\u200D\u{1F308}!"],
  ["cjk", "日本語のテキスト、中文字符，한국어 텍스트。"],
  ["rtl", "שלום עולם مرحبا بالعالم \u200F\u200Eok"],
  ["no-break and ideographic spaces", "x\u00A0\u00A0y \u3000全角 a\u2028b\u2029c"],
  // Where JavaScript's \s differs from Rust's: U+0085 is white space to tiktoken (Rust), not to JavaScript;
  // U+FEFF is white space to JavaScript, not to tiktoken. U+180E is white space to PCRE2's own \s only.
  ["U+0085 next line", "a\u0085b a\u0085\u0085 b \u0085"],
  ["U+FEFF no-break", "x\uFEFFy \uFEFFstart\uFEFF \uFEFF\uFEFF"],
  ["U+180E mongolian vowel separator", "a \u180E b a\u180E\u180Eb"],
  ["numbers", "1234567890 3.14159 1,000,000 ١٢٣ ½ Ⅻ 12abc34"],
  ["punctuation", "!!!??? ... --- ((()))  <<>> @#$%^&*"],
  ["code", "def f(x):\n    return x**2  # comment\n\tif (a&&b) { c->d(); }\n"],
  ["repeats", "a".repeat(300) + " " + "ab".repeat(100)],
  ["endoftext as text", "Hello<|endoftext|>world <|endoftext|>"],
  ["endoftext special", "Hello<|endoftext|>world <|endoftext|>", true],
  ["kjv genesis 1-3", readFileSync(join(here, "kjv_genesis_1-3.txt"), "utf8")],
];

const enc = get_encoding("gpt2");
const out = cases.map(([name, text, special]) => ({
  name,
  text,
  special: !!special,
  ids: Array.from(special ? enc.encode(text, "all") : enc.encode_ordinary(text)),
}));
enc.free();
// the package's version, from the package.json above its main file (its "exports" hide package.json itself)
const version = JSON.parse(readFileSync(join(dirname(require.resolve("tiktoken")), "package.json"), "utf8")).version;
const generator = JSON.stringify(`make_ids.mjs, npm tiktoken ${version}, encoding gpt2`);
writeFileSync(join(here, "gpt2_ids.json"),  // one case a line, so a diff shows which changed
              `{"generator": ${generator}, "cases": [\n${out.map((c) => JSON.stringify(c)).join(",\n")}\n]}\n`);
console.log(`wrote ${out.length} cases with tiktoken ${version}`);
